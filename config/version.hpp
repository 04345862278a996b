// The version of this build: the project version and the commit it was built
// from (cmake/build_version.cmake writes the definition at every build), e.g.
// "0.1.0+e33dd75a1b2c" or "0.1.0+e33dd75a1b2c-dirty"; the project version
// alone when the source is not a git checkout.
#pragma once

namespace downpour {

const char* build_version();

}  // namespace downpour
