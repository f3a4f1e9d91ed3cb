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
	"transport":   transportScenarios,
	"log-storage": logStorageScenarios,
	"durable":     DurableSuite,
	"notifier":    NotifierSuite,
	"queue":       QueueSuite,
	"queue-v2":    QueueV2Suite,
}

// pluginSuites hold checks of one plugin's own promises beyond its kind
// (its schema's exact claims, its routes, its outbound methods). They run
// only against the plugin of that manifest name, never a third party's.
var pluginSuites = map[string]func() []Scenario{
	"animus-transport-http":   TransportHTTPSuite,
	"animus-trigger-slack":    TriggerSlackSuite,
	"animus-notifier-webhook": NotifierWebhookSuite,
}

// ScenariosFor returns everything that applies to the target: the generic
// scenarios, its kind's suite, and its own suite if it is one of ours.
func ScenariosFor(t *Target) []Scenario {
	out := Scenarios(t.Kind)
	// A queue that passes the Animus 0.7 gate serves queue/v2/* beside the
	// 0.3.2 surface: both suites apply. One that does not keeps exactly
	// the 0.3.2 suite.
	if t.Kind == "queue" {
		if _, err := RequireGenerationFencedQueue(t.Init); err == nil {
			out = append(out, QueueV2Suite()...)
		}
	}
	if t.Manifest != nil {
		if suite, ok := pluginSuites[t.Manifest.Name]; ok {
			out = append(out, suite()...)
		}
	}
	return out
}

// Scenarios returns the generic scenarios followed by the kind's suite.
func Scenarios(kind string) []Scenario {
	out := Generic()
	if suite, ok := kindSuites[kind]; ok {
		out = append(out, suite()...)
	}
	return out
}
