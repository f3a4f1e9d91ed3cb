package model

import "fmt"

// InputError is caller input that cannot be accepted. Field names the
// offending key when there is one; the handlers send it as error.data.field.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return e.Msg }

func inputErr(field, format string, args ...any) *InputError {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}
