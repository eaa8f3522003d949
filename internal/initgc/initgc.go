// Package initgc keeps the garbage collector off while the packages of a
// binary initialise, until Restore.
//
// The initialisers of skilld's dependencies (protobuf registrations,
// validators' patterns, SDK tables) allocate about 5 MB, nearly all of it
// kept for the life of the process; collecting while they run (two cycles
// in every command, a quarter of `skilld version`'s CPU) frees next to
// nothing. Package main imports this package, which is initialised as soon
// as its few dependencies are, before most of the heavy ones, and calls
// Restore from its own init, which runs after every other.
package initgc

import "runtime/debug"

// percent is the GOGC the process started with (the environment's, or
// 100), set once at init.
var percent = debug.SetGCPercent(-1)

// Restore turns the collector back on, as GOGC asks.
func Restore() { debug.SetGCPercent(percent) }
