module github.com/skilld/skilld/bench/peers

go 1.26.0

require (
	github.com/skilld/skilld v0.0.0
	google.golang.org/adk v1.6.0
	trpc.group/trpc-go/trpc-agent-go v1.11.2
)

require (
	github.com/goccy/go-yaml v1.19.2 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.44.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/skilld/skilld => ../..
