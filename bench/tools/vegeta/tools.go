//go:build tools

package tools

import _ "github.com/tsenart/vegeta/v12"
