# libonyxruntime_providers_cuda.so: CUDAExecutionProvider, loaded by the main
# library with dlopen (providers/cuda_loader.cc) only when a session asks for
# CUDA. Built when the CUDA toolkit is found (ONYX_USE_CUDA, ON by default
# then); configuring without a toolkit builds everything else.
#
# What it links: the CUDA runtime statically (no libcudart.so to find), and
# nothing else of CUDA: cuBLAS, cuBLASLt and cuDNN are opened by soname at run
# time (providers/cuda/cuda_libs.cc), from ONYX_CUDA_LIB_DIRS, the CUDA toolkit
# or the nvidia-* pip packages (torch's), so one build runs with either.
include(CheckLanguage)
if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
check_language(CUDA)
set(_onyx_cuda_default OFF)
if(CMAKE_CUDA_COMPILER AND NOT _onyx_san AND NOT ONYX_FUZZ)
  set(_onyx_cuda_default ON)
endif()
option(ONYX_USE_CUDA "Build libonyxruntime_providers_cuda.so (CUDA toolkit found)" ${_onyx_cuda_default})
set(ONYX_CUDA_TARGET "")
set(ONYX_CUDA_COPY "")
if(ONYX_USE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "ONYX_USE_CUDA is ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  endif()
  # Ampere (A100) and Hopper (H100/H200) machine code; nothing else, so nvcc
  # compiles each kernel twice, not for every architecture.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80;90")
  endif()
  if(CCACHE_PROGRAM)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  find_path(ONYX_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
  if(NOT ONYX_CUDNN_INCLUDE_DIR)
    message(FATAL_ERROR "cudnn.h not found (cuDNN 9 headers): install cuDNN or configure with -DONYX_USE_CUDA=OFF")
  endif()
  file(GLOB ONYX_CUDA_SRCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/providers/cuda/*.cc
       ${CMAKE_SOURCE_DIR}/providers/cuda/*/*.cc ${CMAKE_SOURCE_DIR}/providers/cuda/*/*.cu)
  # The framework pieces its kernels use (tensors, status, the IR's node
  # attributes, the kernel registry), compiled in again with hidden symbols:
  # the main library exports only OnyxGetApiBase, and the two libraries
  # exchange objects of the same layout (checked by kCudaProviderAbi).
  list(APPEND ONYX_CUDA_SRCS
       ${CMAKE_SOURCE_DIR}/core/framework/status.cc ${CMAKE_SOURCE_DIR}/core/framework/data_type.cc
       ${CMAKE_SOURCE_DIR}/core/framework/tensor.cc ${CMAKE_SOURCE_DIR}/core/framework/allocator.cc
       ${CMAKE_SOURCE_DIR}/core/graph/graph.cc ${CMAKE_SOURCE_DIR}/providers/kernel.cc)
  add_library(onyxruntime_providers_cuda SHARED ${ONYX_CUDA_SRCS} ${CMAKE_SOURCE_DIR}/providers/cuda/provider.map)
  target_include_directories(onyxruntime_providers_cuda PRIVATE ${CMAKE_SOURCE_DIR})
  target_include_directories(onyxruntime_providers_cuda SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS}
                             ${ONYX_CUDNN_INCLUDE_DIR})
  target_compile_options(onyxruntime_providers_cuda PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-fvisibility=hidden -Xcompiler=-Wall>)
  target_link_libraries(onyxruntime_providers_cuda PRIVATE CUDA::cudart_static Threads::Threads ${CMAKE_DL_LIBS}
    -Wl,--version-script=${CMAKE_SOURCE_DIR}/providers/cuda/provider.map -Wl,--no-undefined)
  set_target_properties(onyxruntime_providers_cuda PROPERTIES
    CUDA_SEPARABLE_COMPILATION OFF CUDA_RUNTIME_LIBRARY Static
    # cuBLAS/cuDNN placed beside it are found too (dlopen reads the caller's RUNPATH).
    BUILD_RPATH "\$ORIGIN" INSTALL_RPATH "\$ORIGIN"
    LINK_DEPENDS ${CMAKE_SOURCE_DIR}/providers/cuda/provider.map)
  set(ONYX_CUDA_TARGET onyxruntime_providers_cuda)
  set(ONYX_CUDA_COPY COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:onyxruntime_providers_cuda> ${PY_STAGE}/)
  install(TARGETS onyxruntime_providers_cuda LIBRARY DESTINATION lib)
  message(STATUS "onyxruntime: CUDA provider enabled (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "onyxruntime: CUDA provider not built (no CUDA toolkit, or ONYX_USE_CUDA=OFF)")
endif()
