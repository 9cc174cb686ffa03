"""Low-level pieces of onyxruntime (cffi binding, exceptions, options)."""
