"""cerveau-tui: a terminal harness that drives a local llama-server model as a coding agent."""

__version__ = "0.1.0"

# Before any dependency imports: pyseccomp's import-time ctypes.util.find_library ran programs
# found on our PATH (gcc, ld, objdump) when ldconfig did not list a library (host_process.py).
from . import host_process as _host_process  # noqa: E402

_host_process.install_find_library()
