# cmake -DCOMPILER=<g++> -DOBJDUMP=<objdump> -DSOURCE=<file.cpp> -DOBJECT=<file.o> "-DFLAGS=<list>"
#       [-DCHECK=<name>@<part of the mangled name>@<packed instruction regex>] -P check_vectorized.cmake
#
# Compiles SOURCE with FLAGS, disassembles it and passes when the hot-loop functions of core/isa.hpp
# hold packed f32 multiplications: the build level's copy (isa::detail::at_build, `mulps` on xmm)
# and the AVX-512 one (isa::detail::at_avx512, `vmulps` on zmm); or, with CHECK, the functions it
# names hold what it says. Fails, naming what is scalar, when a copy holds only scalar ones
# (`mulss`), or when a copy is missing.
foreach(v COMPILER OBJDUMP SOURCE OBJECT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_vectorized: -D${v}=... is required")
  endif()
endforeach()
execute_process(COMMAND ${COMPILER} -std=c++20 ${FLAGS} -c ${SOURCE} -o ${OBJECT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} did not compile:\n${err}")
endif()
execute_process(COMMAND ${OBJDUMP} -d --no-show-raw-insn ${OBJECT} RESULT_VARIABLE rc OUTPUT_VARIABLE asm)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} -d ${OBJECT} failed")
endif()
# One list entry per function: "<mangled name>" followed by its instructions.
string(REPLACE ";" "," asm "${asm}")
string(REGEX REPLACE "\n([0-9a-f]+ <)" ";\\1" functions "${asm}")
# Each copy: its name, the part of its mangled name, and what a packed multiplication looks like.
set(checks "isa::detail::at_build@6detail8at_build@[^v]mulps[^\n]*%xmm" "isa::detail::at_avx512@6detail9at_avx512@vmulps[^\n]*%zmm")
if(DEFINED CHECK)
  set(checks "${CHECK}")
endif()
foreach(level IN LISTS checks)
  string(REGEX MATCH "^([^@]+)@([^@]+)@(.*)$" _ "${level}")
  set(name "${CMAKE_MATCH_1}")
  set(mangled "${CMAKE_MATCH_2}")
  set(packed "${CMAKE_MATCH_3}")
  set(copies 0)
  set(vector 0)
  foreach(f IN LISTS functions)
    if(f MATCHES "^[0-9a-f]+ <[^>]*${mangled}")
      math(EXPR copies "${copies} + 1")
      if(f MATCHES "${packed}")
        math(EXPR vector "${vector} + 1")
      endif()
    endif()
  endforeach()
  if(copies EQUAL 0)
    message(FATAL_ERROR "${SOURCE}: no function ${name} in the object (the row loops)")
  endif()
  if(vector EQUAL 0)
    message(FATAL_ERROR "${SOURCE}: none of the ${copies} copies of ${name} holds packed arithmetic "
                        "(/${packed}/): the row loops are scalar with FLAGS='${FLAGS}'")
  endif()
  message(STATUS "${name}: ${vector} of ${copies} copies hold packed arithmetic")
endforeach()
