# ctfx_opt --run into a folder that does not exist (cmake -P, with OPT, DATA and OUT): the folder
# and its parents are created, the files are written, and stdout lists them with their shapes.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${OUT})
set(dir ${OUT}/a/b)
set(in ${DATA}/index_put_copy.input0.npy,${DATA}/index_put_copy.input1.npy,${DATA}/index_put_copy.input2.npy)
execute_process(COMMAND ${OPT} ${DATA}/index_put_copy.txt --run --inputs ${in} --outputs ${dir}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctfx_opt failed (${rc}): ${err}")
endif()
if(NOT EXISTS ${dir}/mutated0.npy)
  message(FATAL_ERROR "no ${dir}/mutated0.npy; stdout:\n${out}")
endif()
set(expect "ctfx_opt: ran [^\n]*index_put_copy\\.txt on the host backend \\(3 inputs\\); wrote [0-9]+ files?:\n.*${dir}/mutated0\\.npy  f32\\[")
if(NOT out MATCHES "${expect}")
  message(FATAL_ERROR "stdout does not match '${expect}':\n${out}")
endif()
# A name taken by a file is refused by name, and nothing is written.
file(WRITE ${OUT}/taken "")
execute_process(COMMAND ${OPT} ${DATA}/index_put_copy.txt --run --inputs ${in} --outputs ${OUT}/taken
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "--outputs: cannot create the folder '[^']*taken'")
  message(FATAL_ERROR "expected exit 1 and a message naming the folder, got ${rc}: ${err}")
endif()
message(STATUS "ok: ${out}")
