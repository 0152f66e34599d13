package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// profileFlags are the developer flags --cpuprofile and --memprofile, for
// looking at where a decode spends its time and memory (`go tool pprof`).
type profileFlags struct {
	cpu, mem *string
	heapDone bool // the heap profile is written
}

func addProfileFlags(fs *flag.FlagSet) profileFlags {
	return profileFlags{
		cpu: fs.String("cpuprofile", "", "write a CPU profile of the decode to `FILE` (go tool pprof)"),
		mem: fs.String("memprofile", "", "write a heap profile to `FILE` (go tool pprof) at the end of the input, before the connections left open are finished"),
	}
}

// start begins CPU profiling when asked; the returned function stops it and
// writes the heap profile. It reports problems on stderr and never fails
// the decode.
func (p *profileFlags) start(stderr io.Writer) (stop func()) {
	var cpuFile *os.File
	if *p.cpu != "" {
		f, err := os.Create(*p.cpu)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: --cpuprofile: %v\n", err)
		} else if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "iwarpdump: --cpuprofile: %v\n", err)
			f.Close()
		} else {
			cpuFile = f
		}
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		p.heap(stderr)
	}
}

// heap writes the heap profile, once, when asked: at the end of the input,
// where the memory of the connections still open is in use (the peak of
// a capture that ends with many of them), else when the decode stops.
func (p *profileFlags) heap(stderr io.Writer) {
	if *p.mem == "" || p.heapDone {
		return
	}
	p.heapDone = true
	f, err := os.Create(*p.mem)
	if err != nil {
		fmt.Fprintf(stderr, "iwarpdump: --memprofile: %v\n", err)
		return
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		fmt.Fprintf(stderr, "iwarpdump: --memprofile: %v\n", err)
	}
	f.Close()
}
