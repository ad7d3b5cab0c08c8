package places

import "testing"

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"São Paulo": "sao paulo", "München": "munchen", "Côte d'Ivoire": "cote divoire", "  Saint-Étienne ": "saint etienne",
		"Straße": "strasse", "Øresund": "oresund", "Łódź": "lodz", "MOSCOW": "moscow", "Москва": "москва", "東京": "東京",
		"New  York,": "new york", "O'ahu": "oahu", "St. John's": "st johns",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}
