// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

// The executable is thin: parse the arguments, run the chosen subcommand,
// exit with its code (0 ok, 1 bad configuration or arguments, 2 runtime failure).
exit(CommandLineTool(arguments: Array(CommandLine.arguments.dropFirst())).run())
