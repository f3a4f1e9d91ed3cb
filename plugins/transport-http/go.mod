module github.com/animus-plugins/animus-plugins/plugins/transport-http

go 1.26.0

require (
	github.com/animus-plugins/animus-plugins/pkg/golden v0.0.0
	github.com/animus-plugins/animus-plugins/pkg/pluginkit v0.0.0
	github.com/go-chi/chi/v5 v5.5.0
	github.com/pb33f/libopenapi v0.38.6
	github.com/pb33f/libopenapi-validator v0.14.0
)

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/basgys/goxml2json v1.1.1-0.20231018121955-e66ee54ceaad // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/go-openapi/jsonpointer v0.23.2 // indirect
	github.com/go-openapi/swag/jsonname v0.26.1 // indirect
	github.com/pb33f/jsonpath v0.8.2 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.6 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace github.com/animus-plugins/animus-plugins/pkg/pluginkit => ../../pkg/pluginkit

replace github.com/animus-plugins/animus-plugins/pkg/golden => ../../pkg/golden
