/* Compile-time guard of the OnyxApi layout: every entry shipped in a released
 * API version keeps its slot. Append a block for each new version; never edit
 * an old one. Built as part of the tests (target abi_offsets). */
#include <stddef.h>

#include "onyxruntime/onyxruntime_c_api.h"

#define ONYX_SLOT(name, index) \
  _Static_assert(offsetof(OnyxApi, name) / sizeof(void*) == (index), "OnyxApi entry " #name " moved")

/* API version 1 */
ONYX_SLOT(StatusCreate, 0);
ONYX_SLOT(StatusGetCode, 1);
ONYX_SLOT(StatusGetMessage, 2);
ONYX_SLOT(StatusRelease, 3);
ONYX_SLOT(EnvCreate, 4);
ONYX_SLOT(EnvRelease, 5);
ONYX_SLOT(SessionOptionsCreate, 6);
ONYX_SLOT(SessionOptionsClone, 7);
ONYX_SLOT(SessionOptionsRelease, 8);
ONYX_SLOT(SessionOptionsSetIntraOpThreads, 9);
ONYX_SLOT(SessionOptionsSetInterOpThreads, 10);
ONYX_SLOT(SessionOptionsSetGraphOptimizationLevel, 11);
ONYX_SLOT(SessionOptionsSetExecutionMode, 12);
ONYX_SLOT(SessionOptionsSetLogSeverity, 13);
ONYX_SLOT(SessionOptionsSetLogId, 14);
ONYX_SLOT(SessionOptionsAddConfigEntry, 15);
ONYX_SLOT(SessionOptionsGetConfigEntry, 16);
ONYX_SLOT(SessionOptionsAppendProvider, 17);
ONYX_SLOT(SessionCreate, 18);
ONYX_SLOT(SessionCreateFromBytes, 19);
ONYX_SLOT(SessionRelease, 20);
ONYX_SLOT(SessionGetInputCount, 21);
ONYX_SLOT(SessionGetOutputCount, 22);
ONYX_SLOT(SessionGetOverridableInitializerCount, 23);
ONYX_SLOT(SessionGetInputName, 24);
ONYX_SLOT(SessionGetOutputName, 25);
ONYX_SLOT(SessionGetOverridableInitializerName, 26);
ONYX_SLOT(SessionGetInputTypeInfo, 27);
ONYX_SLOT(SessionGetOutputTypeInfo, 28);
ONYX_SLOT(SessionGetOverridableInitializerTypeInfo, 29);
ONYX_SLOT(SessionGetModelMetadata, 30);
ONYX_SLOT(SessionGetProviderCount, 31);
ONYX_SLOT(SessionGetProviderName, 32);
ONYX_SLOT(SessionRun, 33);
ONYX_SLOT(RunOptionsCreate, 34);
ONYX_SLOT(RunOptionsRelease, 35);
ONYX_SLOT(RunOptionsSetTag, 36);
ONYX_SLOT(RunOptionsGetTag, 37);
ONYX_SLOT(RunOptionsSetLogSeverity, 38);
ONYX_SLOT(RunOptionsSetTerminate, 39);
ONYX_SLOT(RunOptionsGetTerminate, 40);
ONYX_SLOT(MemoryInfoCreate, 41);
ONYX_SLOT(MemoryInfoCreateCpu, 42);
ONYX_SLOT(MemoryInfoRelease, 43);
ONYX_SLOT(MemoryInfoGetName, 44);
ONYX_SLOT(MemoryInfoGetDeviceId, 45);
ONYX_SLOT(MemoryInfoGetMemType, 46);
ONYX_SLOT(MemoryInfoGetAllocatorType, 47);
ONYX_SLOT(GetDefaultAllocator, 48);
ONYX_SLOT(AllocatorAlloc, 49);
ONYX_SLOT(AllocatorFree, 50);
ONYX_SLOT(AllocatorGetMemoryInfo, 51);
ONYX_SLOT(ValueCreateTensor, 52);
ONYX_SLOT(ValueCreateTensorWithData, 53);
ONYX_SLOT(ValueCreateTensorWithDeleter, 54);
ONYX_SLOT(ValueRelease, 55);
ONYX_SLOT(ValueGetKind, 56);
ONYX_SLOT(ValueGetTensorTypeAndShape, 57);
ONYX_SLOT(ValueGetTensorData, 58);
ONYX_SLOT(ValueGetTensorMemoryInfo, 59);
ONYX_SLOT(StringTensorFill, 60);
ONYX_SLOT(StringTensorGetElement, 61);
ONYX_SLOT(TypeInfoRelease, 62);
ONYX_SLOT(TypeInfoGetKind, 63);
ONYX_SLOT(TypeInfoGetTypeString, 64);
ONYX_SLOT(TypeInfoGetTensorInfo, 65);
ONYX_SLOT(TensorTypeAndShapeInfoRelease, 66);
ONYX_SLOT(TensorInfoGetElementType, 67);
ONYX_SLOT(TensorInfoGetDimCount, 68);
ONYX_SLOT(TensorInfoHasShape, 69);
ONYX_SLOT(TensorInfoGetDims, 70);
ONYX_SLOT(TensorInfoGetSymbolicDims, 71);
ONYX_SLOT(TensorInfoGetElementCount, 72);
ONYX_SLOT(ModelMetadataRelease, 73);
ONYX_SLOT(ModelMetadataGetProducerName, 74);
ONYX_SLOT(ModelMetadataGetGraphName, 75);
ONYX_SLOT(ModelMetadataGetDomain, 76);
ONYX_SLOT(ModelMetadataGetDescription, 77);
ONYX_SLOT(ModelMetadataGetGraphDescription, 78);
ONYX_SLOT(ModelMetadataGetVersion, 79);
ONYX_SLOT(ModelMetadataGetCustomCount, 80);
ONYX_SLOT(ModelMetadataGetCustomKey, 81);
ONYX_SLOT(ModelMetadataGetCustomValue, 82);
ONYX_SLOT(ModelMetadataLookupCustom, 83);
ONYX_SLOT(GetAvailableProviderCount, 84);
ONYX_SLOT(GetAvailableProviderName, 85);
ONYX_SLOT(GetAllProviderCount, 86);
ONYX_SLOT(GetAllProviderName, 87);
ONYX_SLOT(GetVersionString, 88);
ONYX_SLOT(GetBuildInfoString, 89);
ONYX_SLOT(SessionOptionsEnableProfiling, 90);
ONYX_SLOT(SessionOptionsDisableProfiling, 91);
ONYX_SLOT(SessionEndProfiling, 92);
ONYX_SLOT(SessionGetProfilingStartTimeNs, 93);
_Static_assert(sizeof(OnyxApi) / sizeof(void*) >= 94, "OnyxApi shrank");

int onyx_abi_offsets_checked(void) { return 94; }

/* API version 2 */
ONYX_SLOT(SessionCreateIoBinding, 94);
ONYX_SLOT(IoBindingRelease, 95);
ONYX_SLOT(IoBindingBindInput, 96);
ONYX_SLOT(IoBindingBindOutput, 97);
ONYX_SLOT(IoBindingBindOutputToDevice, 98);
ONYX_SLOT(IoBindingGetBoundOutputCount, 99);
ONYX_SLOT(IoBindingGetBoundOutputName, 100);
ONYX_SLOT(IoBindingGetBoundOutputValue, 101);
ONYX_SLOT(IoBindingClearBoundInputs, 102);
ONYX_SLOT(IoBindingClearBoundOutputs, 103);
ONYX_SLOT(IoBindingSynchronizeInputs, 104);
ONYX_SLOT(IoBindingSynchronizeOutputs, 105);
ONYX_SLOT(SessionRunWithBinding, 106);
ONYX_SLOT(ValueGetTypeInfo, 107);
ONYX_SLOT(ValueGetElementCount, 108);
ONYX_SLOT(ValueGetElement, 109);
ONYX_SLOT(ValueCreateSequence, 110);
ONYX_SLOT(ValueCreateMap, 111);
ONYX_SLOT(ValueCreateOptional, 112);
ONYX_SLOT(SessionOptionsSetOptimizedModelFilePath, 113);
ONYX_SLOT(SessionOptionsAddFreeDimensionOverride, 114);
ONYX_SLOT(SessionOptionsAddFreeDimensionOverrideByName, 115);
ONYX_SLOT(SessionOptionsAddInitializer, 116);
ONYX_SLOT(SessionOptionsSetMemPattern, 117);
ONYX_SLOT(SessionOptionsSetMemReuse, 118);
ONYX_SLOT(SessionOptionsSetCpuMemArena, 119);
ONYX_SLOT(SessionOptionsSetDeterministicCompute, 120);
ONYX_SLOT(SessionOptionsSetExecutionOrder, 121);
ONYX_SLOT(SessionOptionsSetLogVerbosity, 122);
ONYX_SLOT(RunOptionsSetLogVerbosity, 123);
ONYX_SLOT(SetGlobalSeed, 124);
ONYX_SLOT(SetDefaultLogSeverity, 125);
ONYX_SLOT(SetDefaultLogVerbosity, 126);
ONYX_SLOT(SetTelemetryEnabled, 127);
ONYX_SLOT(GetTelemetryEnabled, 128);
ONYX_SLOT(ArenaCfgCreate, 129);
ONYX_SLOT(ArenaCfgRelease, 130);
ONYX_SLOT(EnvCreateAndRegisterAllocator, 131);
ONYX_SLOT(EnvUnregisterAllocator, 132);

/* API version 3 */
ONYX_SLOT(ProviderGetSupportedOperatorCount, 133);
ONYX_SLOT(ProviderGetSupportedOperator, 134);

/* API version 4 */
ONYX_SLOT(SessionRunTensors, 135);

/* API version 5 */
ONYX_SLOT(RunOptionsAddConfigEntry, 136);
ONYX_SLOT(RunOptionsGetConfigEntry, 137);
ONYX_SLOT(SessionRunAsync, 138);
ONYX_SLOT(SessionGetInputMemoryInfo, 139);
ONYX_SLOT(SessionGetOutputMemoryInfo, 140);

/* API version 6 */
ONYX_SLOT(ValueCreateSparseTensor, 141);
ONYX_SLOT(ValueGetSparseFormat, 142);
ONYX_SLOT(SessionOptionsAddExternalFileInMemory, 143);
ONYX_SLOT(ArenaCfgCreateFromKeys, 144);
ONYX_SLOT(MemoryInfoCreateV2, 145);
ONYX_SLOT(MemoryInfoGetDeviceMemType, 146);
ONYX_SLOT(MemoryInfoGetVendorId, 147);
ONYX_SLOT(LoraAdapterCreate, 148);
ONYX_SLOT(LoraAdapterCreateFromBytes, 149);
ONYX_SLOT(LoraAdapterCreateFromValues, 150);
ONYX_SLOT(LoraAdapterRelease, 151);
ONYX_SLOT(LoraAdapterGetVersions, 152);
ONYX_SLOT(LoraAdapterGetParameterCount, 153);
ONYX_SLOT(LoraAdapterGetParameter, 154);
ONYX_SLOT(LoraAdapterSave, 155);
ONYX_SLOT(RunOptionsAddActiveLoraAdapter, 156);
ONYX_SLOT(SessionGetAssignedNodeCount, 157);
ONYX_SLOT(SessionGetAssignedNode, 158);
ONYX_SLOT(EnvCreateGlobalThreadPools, 159);
ONYX_SLOT(SessionOptionsSetUsePerSessionThreads, 160);
ONYX_SLOT(SessionOptionsSetLoadCancellation, 161);

/* API version 7 */
ONYX_SLOT(ValueCreateTensorOnDevice, 162);
ONYX_SLOT(ValueCopyTensorToHost, 163);
