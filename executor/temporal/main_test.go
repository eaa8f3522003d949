package temporal_test

import (
	"testing"

	"github.com/skilld/skilld/executor/temporal/temporaltest"
)

// server is the Temporal dev server of this test binary.
var server *temporaltest.Server

func TestMain(m *testing.M) { temporaltest.Main(m, &server) }
