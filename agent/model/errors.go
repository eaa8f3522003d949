package model

import "github.com/skilld/skilld"

func errNoResponse() error {
	return skilld.Errorf(skilld.EUNAVAILABLE, "the model stream ended without a response")
}
