package reliability

// testAdvice is the advice the package's tests build their layers with:
// tools/advice, what the server uses, so that the tests can assert what a
// model reads after each give-up. tools/advice imports this package, so
// only the external test package can import it; advice_test.go hands it
// over with UseTestAdvice before any test runs.
var testAdvice Advisor

// UseTestAdvice sets testAdvice.
func UseTestAdvice(a Advisor) { testAdvice = a }
