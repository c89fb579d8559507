# Helpers for ctfx's own tests and examples.

# Strict warnings for ctfx's own targets (the INTERFACE library imposes none on users).
function(ctfx_strict target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Werror -Wshadow>)
  if(CTFX_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# The include directories and definitions a bare compiler command needs to see ctfx (for the
# must-not-compile cases and the cross-compiler checks, which call the compiler themselves).
set(CTFX_TEST_INCLUDE_FLAGS
    -I${PROJECT_SOURCE_DIR}/include -isystem ${CTFX_CCCL_INCLUDE_DIR} -isystem ${Boost_INCLUDE_DIRS}
    -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP)
