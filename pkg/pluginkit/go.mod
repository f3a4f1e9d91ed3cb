module github.com/animus-plugins/animus-plugins/pkg/pluginkit

go 1.26
