package conformance

// Generic returns the lifecycle and wire scenarios every plugin must pass.
func Generic() []Scenario {
	var out []Scenario
	for _, group := range [][]Scenario{cliScenarios(), handshakeScenarios(), wireScenarios(), busyScenarios(), exitScenarios()} {
		out = append(out, group...)
	}
	return out
}

// kindSuites holds the scenarios of each plugin kind beyond the generic ones.
var kindSuites = map[string]func() []Scenario{
	"subject":     subjectScenarios,
	"trigger":     triggerScenarios,
	"transport":   func() []Scenario { return append(transportScenarios(), TransportHTTPSuite()...) },
	"log-storage": logStorageScenarios,
	"durable":     DurableSuite,
}

// Scenarios returns the generic scenarios followed by the kind's suite.
func Scenarios(kind string) []Scenario {
	out := Generic()
	if suite, ok := kindSuites[kind]; ok {
		out = append(out, suite()...)
	}
	return out
}
