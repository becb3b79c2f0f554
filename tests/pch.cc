// The one source of braid_test_pch, which exists to build the tests' shared
// precompiled header (tests/CMakeLists.txt).
