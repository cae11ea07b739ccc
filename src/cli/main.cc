#include <iostream>

#include "cli.h"

int main(int argc, char** argv) { return torch2pprof::cli::Run(argc, argv, std::cout, std::cerr); }
