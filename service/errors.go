package service

import (
	"fmt"

	"github.com/skilld/skilld"
)

// invalidField returns EINVALID with a detail naming the field.
func invalidField(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &skilld.Error{Code: skilld.EINVALID, Message: msg, Details: []skilld.Detail{{Field: field, Message: msg}}}
}
