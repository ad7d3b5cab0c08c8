package stacclient

import (
	"encoding/json"
	"errors"
)

const areaAccepted = `a bbox [west,south,east,north] (a list, a JSON-encoded list or "w,s,e,n") or a GeoJSON geometry or Feature (an object or a JSON string)`

// ParseArea reads an area of interest given in one argument: a bbox in any
// form ParseBBox accepts, or a GeoJSON geometry or Feature in any form
// ParseIntersects accepts. Exactly one of bbox and intersects is set when
// the area is present; both are nil when it is absent. param names the
// argument in errors.
func ParseArea(param string, v any) (bbox []float64, intersects json.RawMessage, err error) {
	bad := paramErrorFor(param, v, areaAccepted)
	in, err := readLoose(v, jsonContainerText, bad)
	if err != nil || !in.present {
		return nil, nil, err
	}
	rename := func(err error) error {
		var pe *ParamError
		if errors.As(err, &pe) {
			renamed := *pe
			renamed.Param = param
			return &renamed
		}
		return err
	}
	switch in.value.(type) {
	case map[string]any:
		intersects, err = ParseIntersects(in.value)
		return nil, intersects, rename(err)
	case []any, string, []float64, []int:
		bbox, err = ParseBBox(in.value)
		return bbox, nil, rename(err)
	}
	if decoded, ok := asDecodedJSON(v); ok {
		return ParseArea(param, decoded)
	}
	return nil, nil, bad("a " + jsonTypeName(v) + " is neither a bbox nor a GeoJSON object")
}
