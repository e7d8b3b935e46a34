// toml++'s implementation, compiled into a fuzz target with the target's sanitizers, for the
// targets whose input is TOML read by our code (suite-fuzz, sim-durations-fuzz): the library
// objects see toml++ as the shared library (TOMLPP_CFLAGS: TOML_HEADER_ONLY=0), and these
// definitions, linked before -ltomlplusplus, are the ones the target runs. Every other target
// runs Debian's uninstrumented libtomlplusplus (tests/local.mk says why).
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
