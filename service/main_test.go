package service_test

import (
	"testing"

	"github.com/skilld/skilld/blob/s3test"
)

// s3server is the S3 server of this test binary (see package s3test), for
// the tests that run over both blob drivers.
var s3server *s3test.Server

func TestMain(m *testing.M) { s3test.Main(m, &s3server) }
