using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyTitle("OnyxRuntime")]
[assembly: AssemblyDescription("C# binding of Onyx Runtime over libonyxruntime.so's C API")]
[assembly: AssemblyVersion("0.1.0.0")]
[assembly: InternalsVisibleTo("OnyxRuntime.Tests")]
