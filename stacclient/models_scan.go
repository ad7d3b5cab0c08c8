package stacclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// A minimal splitter for JSON objects and arrays: it finds where each member
// or element starts and ends without decoding it, so that the model codec
// decodes every byte once per nesting level instead of re-scanning whole
// subtrees. It relies on encoding/json having validated the document
// before calling an UnmarshalJSON method, and still reports malformed
// structure rather than misreading it.

// arrayElements splits a JSON array into its undecoded elements.
func arrayElements(data []byte) ([][]byte, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, errors.New("not a JSON array")
	}
	elems := [][]byte{}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return elems, trailingOnlySpace(data, i+1)
	}
	for {
		end, err := skipValue(data, i)
		if err != nil {
			return nil, err
		}
		elems = append(elems, data[i:end])
		next, closed, err := afterEntry(data, end, ']', "array")
		if closed {
			return elems, err
		}
		if err != nil {
			return nil, err
		}
		i = next
	}
}

// objectMember is one "key": value of a JSON object, value undecoded; the
// key is decoded, and points into the object's bytes when it has no
// escapes (a string per member name was most of a typed decode's
// allocations; callers convert the names they keep).
type objectMember struct {
	key   []byte
	value []byte
}

// memberList is the members of one object, from a pool: objectMembers'
// callers use them only while decoding the object, then release the list
// (a slice grown per object was the rest of those allocations).
type memberList struct{ members []objectMember }

var memberLists = sync.Pool{New: func() any { return new(memberList) }}

// release returns l to the pool; its members must no longer be used.
func (l *memberList) release() {
	if cap(l.members) > 1024 {
		return
	}
	clear(l.members) // they point into the decoded bytes
	l.members = l.members[:0]
	memberLists.Put(l)
}

// objectMembers splits a JSON object into its members without decoding
// the values. encoding/json has validated the bytes before it calls an
// UnmarshalJSON method; anything else is still rejected, not misread.
// The caller releases the list when done with its members.
func objectMembers(data []byte) (*memberList, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	list := memberLists.Get().(*memberList)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		if err := trailingOnlySpace(data, i+1); err != nil {
			list.release()
			return nil, err
		}
		return list, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			list.release()
			return nil, errors.New("malformed JSON object: expected a member name")
		}
		end, err := skipString(data, i)
		if err != nil {
			list.release()
			return nil, err
		}
		key := data[i+1 : end-1]
		// Escapes, and bytes that are not UTF-8 (which encoding/json turns
		// into U+FFFD in every other string), are decoded like any string,
		// so a member name reads the same before and after a round trip.
		if bytes.IndexByte(data[i:end], '\\') >= 0 || !utf8.Valid(key) {
			var decoded string
			if err := json.Unmarshal(data[i:end], &decoded); err != nil {
				list.release()
				return nil, err
			}
			key = []byte(decoded)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			list.release()
			return nil, errors.New("malformed JSON object: expected ':'")
		}
		i = skipSpace(data, i+1)
		valueEnd, err := skipValue(data, i)
		if err != nil {
			list.release()
			return nil, err
		}
		list.members = append(list.members, objectMember{key: key, value: data[i:valueEnd]})
		next, closed, err := afterEntry(data, valueEnd, '}', "object")
		if closed && err == nil {
			return list, nil
		}
		if err != nil {
			list.release()
			return nil, err
		}
		i = next
	}
}

// afterEntry reads what follows an array element or object member ending
// at end: a comma gives the start of the next entry; the closing byte ends
// the container (closed), and err then says whether anything follows it.
func afterEntry(data []byte, end int, closing byte, container string) (next int, closed bool, err error) {
	i := skipSpace(data, end)
	if i >= len(data) {
		return 0, false, errors.New("malformed JSON " + container + ": unterminated")
	}
	switch data[i] {
	case ',':
		return skipSpace(data, i+1), false, nil
	case closing:
		return 0, true, trailingOnlySpace(data, i+1)
	default:
		return 0, false, fmt.Errorf("malformed JSON %s: expected ',' or '%c'", container, closing)
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

func trailingOnlySpace(data []byte, i int) error {
	if skipSpace(data, i) != len(data) {
		return errors.New("malformed JSON: data after the object")
	}
	return nil
}

// skipString returns the index just past the string starting at data[i].
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("malformed JSON: unterminated string")
}

// skipValue returns the index just past the value starting at data[i].
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errors.New("malformed JSON: missing value")
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := skipString(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("malformed JSON: unterminated object or array")
	}
	j := i
	for j < len(data) && !strings.ContainsRune(", \t\r\n}]", rune(data[j])) {
		j++
	}
	if j == i {
		return 0, errors.New("malformed JSON: missing value")
	}
	return j, nil
}

// nestingExceeds reports whether data nests objects and arrays more than
// limit levels deep. Malformed data is left to encoding/json to word.
func nestingExceeds(data []byte, limit int) bool {
	depth := 0
	for j := 0; j < len(data); j++ {
		switch data[j] {
		case '"':
			end, err := skipString(data, j)
			if err != nil {
				return false
			}
			j = end - 1
		case '{', '[':
			depth++
			if depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}
