package benchreport

import (
	"os"
	"runtime"
	"strings"
)

// Machine describes where the benchmarks ran.
type Machine struct {
	CPU       string // model name
	CPUs      int    // logical CPUs
	Kernel    string // e.g. "Linux 6.8.0"
	Arch      string // GOOS/GOARCH
	GoVersion string
	LoadStart string // /proc/loadavg's 1, 5 and 15 minute averages when the run started
	LoadEnd   string // … and when it ended
}

// ParseCPUInfo returns the first model name of /proc/cpuinfo and the
// number of processors it lists.
func ParseCPUInfo(s string) (model string, n int) {
	for line := range strings.SplitSeq(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			n++
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		}
	}
	return model, n
}

// LoadAvg returns the three load averages of a /proc/loadavg line.
func LoadAvg(s string) string {
	f := strings.Fields(s)
	if len(f) < 3 {
		return strings.TrimSpace(s)
	}
	return strings.Join(f[:3], " ")
}

// ReadMachine fills a Machine from /proc and the runtime. The header of
// the benchmark output supplies what /proc cannot (cpu:, goos:, goarch:).
// GoVersion and the load averages are left to the caller.
func ReadMachine(header map[string]string) Machine {
	m := Machine{CPUs: runtime.NumCPU(), Arch: runtime.GOOS + "/" + runtime.GOARCH}
	if header["goos"] != "" && header["goarch"] != "" {
		m.Arch = header["goos"] + "/" + header["goarch"]
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if model, n := ParseCPUInfo(string(b)); n > 0 {
			m.CPU, m.CPUs = model, n
		}
	}
	if m.CPU == "" {
		m.CPU = header["cpu"]
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	return m
}

// String is the machine on one line.
func (m Machine) String() string {
	parts := []string{}
	if m.CPU != "" {
		parts = append(parts, m.CPU)
	}
	if m.CPUs > 0 {
		parts = append(parts, plural(m.CPUs, "CPU"))
	}
	if m.Kernel != "" {
		parts = append(parts, m.Kernel)
	}
	if m.Arch != "" {
		parts = append(parts, m.Arch)
	}
	if m.GoVersion != "" {
		parts = append(parts, m.GoVersion)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return itoa(n) + " " + what + "s"
}
