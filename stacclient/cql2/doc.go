// Package cql2 is stac-mcp's one implementation of OGC 21-065 Common Query
// Language (CQL2): the text encoding parsed into the JSON encoding
// (ParseText), the JSON encoding written as text (ToText), and the
// evaluation of a filter against an item (Compile, Filter.Match).
//
// The JSON encoding, decoded with encoding/json (numbers as json.Number or
// float64), is the one form everything else works on: a text filter is
// parsed into it, and it is what is evaluated and sent to catalogs.
//
// Evaluation follows the standard's three-valued logic (§6): a predicate
// whose operand is NULL (a null or missing property) is NULL, NOT NULL is
// NULL, AND and OR are SQL's, and an item is selected only when the whole
// filter is TRUE. Temporal values are dates or timestamps: a date compares
// with a date, and with a timestamp at the granularity of a day (the
// timestamp's UTC date), so a property holding "2022-04-16" equals
// DATE('2022-04-16'). Comparison of values of different types (a string
// with a number, say) is NULL, not an error, because one property may hold
// different types in different items.
//
// Conformance classes implemented (Classes lists their URIs): basic CQL2,
// advanced comparison operators (LIKE with % _ and the \ escape, BETWEEN,
// IN), case- and accent-insensitive comparison (CASEI, ACCENTI), basic
// spatial functions and their "plus" (S_INTERSECTS on every geometry type
// and BBOX), spatial functions (the DE-9IM relations, from
// github.com/peterstace/simplefeatures), temporal functions (T_* on
// instants and intervals, open ends ".."), array functions (A_*),
// property-property comparisons, arithmetic (+ - * / % div ^), CQL2 text
// and CQL2 JSON. Functions other than these (the standard's examples use
// Buffer, avg, Foo) parse, and Compile refuses them by name.
package cql2
