# The tool's command files (relative to cli/), one per command, shared by the tool (cli/CMakeLists.txt)
# and the argument-layer fuzz target (fuzz/CMakeLists.txt), which builds every command's options.
set(DEVPLACE_CLI_COMMAND_SOURCES
    commands/all.cpp commands/dfmodel.cpp commands/ilp.cpp commands/info.cpp commands/llm.cpp commands/map.cpp
    commands/mcm.cpp commands/partition.cpp commands/peer.cpp commands/phaze.cpp commands/pictures.cpp
    commands/plan.cpp commands/simulate.cpp commands/sweep.cpp commands/topology.cpp)
