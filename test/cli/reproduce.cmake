# cmake -DDP=devplace -DGRAPH=g.json -DTOPOLOGY=t.json -DOUT=plan.json [-DEXTRA="flag;flag"] -P reproduce.cmake
# Runs `devplace plan`, then `devplace simulate --plan` on the plan it wrote with no other flag,
# and passes when both print the same "iteration ... ms, ... samples/s, bubble ..." line.
execute_process(COMMAND ${DP} plan --graph ${GRAPH} --topology ${TOPOLOGY} --exact-product --map-timeout 5 --out ${OUT} ${EXTRA}
                RESULT_VARIABLE rc OUTPUT_VARIABLE plan_out ERROR_VARIABLE plan_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "devplace plan failed (${rc}): ${plan_err}")
endif()
string(REGEX MATCH "chosen[^\n]*(iteration [0-9.]+ ms, [0-9.]+ samples/s, bubble [0-9.]+)" _ "${plan_out}")
set(from_plan "${CMAKE_MATCH_1}")
execute_process(COMMAND ${DP} simulate --graph ${GRAPH} --topology ${TOPOLOGY} --plan ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE sim_out ERROR_VARIABLE sim_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "devplace simulate failed (${rc}): ${sim_err}")
endif()
string(REGEX MATCH "(iteration [0-9.]+ ms, [0-9.]+ samples/s, bubble [0-9.]+)" _ "${sim_out}")
set(from_sim "${CMAKE_MATCH_1}")
if(from_plan STREQUAL "" OR NOT from_plan STREQUAL from_sim)
  message(FATAL_ERROR "plan printed '${from_plan}', simulate --plan printed '${from_sim}'\n${plan_out}\n${sim_out}")
endif()
message(STATUS "reproduced: ${from_plan}")
