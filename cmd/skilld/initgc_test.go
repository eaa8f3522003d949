package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestCollectorOn: the collector, off while the imported packages
// initialise, is on again once main's init has run (unless GOGC=off asks
// otherwise).
func TestCollectorOn(t *testing.T) {
	got := debug.SetGCPercent(100)
	debug.SetGCPercent(got)
	if got == -1 && os.Getenv("GOGC") != "off" {
		t.Fatalf("the collector is off after init (GOGC=%q)", os.Getenv("GOGC"))
	}
}
