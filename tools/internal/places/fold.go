package places

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Fold is the form names are compared in: lower case, accents and other
// combining marks removed (São Paulo → sao paulo, München → munchen),
// letters that decompose into no base letter spelled out (ß → ss, ø → o,
// æ → ae, ł → l), hyphens, dots, apostrophes and other punctuation read as
// a space, and runs of spaces collapsed. Native scripts are kept as they
// are (東京, Москва), lower-cased where the script has case.
func Fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := true // drop leading spaces
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if rep, ok := foldSpecial[r]; ok {
			b.WriteString(rep)
			space = false
			continue
		}
		switch {
		case r == '\'' || r == '’' || r == '`' || r == 'ʻ' || r == 'ʼ':
			continue // d'Ivoire → divoire, O'ahu → oahu: read whether or not it was typed
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
			space = false
		default:
			if !space {
				b.WriteByte(' ')
				space = true
			}
		}
	}
	return strings.TrimRight(b.String(), " ")
}

var foldSpecial = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'ø': "o", 'Ø': "o", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe",
	'đ': "d", 'Đ': "d", 'ð': "d", 'Ð': "d", 'ł': "l", 'Ł': "l", 'ı': "i", 'þ': "th", 'Þ': "th",
	'ħ': "h", 'Ħ': "h",
}
