// Compiled only to build the precompiled header that the test programs share (test/CMakeLists.txt).
