#pragma once
/// \file version.hpp
/// The library version.
#define DEVPLACE_VERSION_MAJOR 0
#define DEVPLACE_VERSION_MINOR 1
#define DEVPLACE_VERSION_PATCH 0
#define DEVPLACE_VERSION_STRING "0.1.0"
