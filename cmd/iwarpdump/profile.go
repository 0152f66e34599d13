package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// profileFlags are the developer flags --cpuprofile, --memprofile and
// --trace, for looking at where a decode spends its time and memory (`go
// tool pprof`) and at what its goroutines wait for (`go tool trace`: the
// workers of -j N).
type profileFlags struct {
	cpu, mem, trace *string
	heapDone        bool // the heap profile is written
}

func addProfileFlags(fs *flag.FlagSet) profileFlags {
	return profileFlags{
		cpu:   fs.String("cpuprofile", "", "write a CPU profile of the decode to `FILE` (go tool pprof)"),
		mem:   fs.String("memprofile", "", "write a heap profile to `FILE` (go tool pprof) at the end of the input, before the connections left open are finished"),
		trace: fs.String("trace", "", "write an execution trace of the decode to `FILE` (go tool trace)"),
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
	var traceFile *os.File
	if *p.trace != "" {
		f, err := os.Create(*p.trace)
		if err != nil {
			fmt.Fprintf(stderr, "iwarpdump: --trace: %v\n", err)
		} else if err := trace.Start(f); err != nil {
			fmt.Fprintf(stderr, "iwarpdump: --trace: %v\n", err)
			f.Close()
		} else {
			traceFile = f
		}
	}
	return func() {
		if traceFile != nil {
			trace.Stop()
			traceFile.Close()
		}
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
