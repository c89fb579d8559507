# A warning for a single-configuration build without CMAKE_BUILD_TYPE: the program then compiles
# without optimization, and ctfx's kernels run many times slower. Used by ctfx's own build (which
# add_subdirectory and FetchContent run) and by the installed package (ctfxConfig.cmake).
function(ctfx_warn_without_build_type)
  get_property(_multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT _multi AND NOT CMAKE_BUILD_TYPE)
    message(WARNING "ctfx: CMAKE_BUILD_TYPE is not set, so your program builds without optimization "
                    "(-O0) and ctfx's kernels run many times slower. Fix: configure with "
                    "-DCMAKE_BUILD_TYPE=Release, or set(CMAKE_BUILD_TYPE Release) in your CMakeLists.txt when it is empty.")
  endif()
endfunction()
