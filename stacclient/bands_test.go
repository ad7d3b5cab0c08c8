package stacclient

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAssetBandsReadsEachVersionsBandLists(t *testing.T) {
	decode := func(s string) Asset {
		t.Helper()
		var a Asset
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	// Earth Search v1 (STAC 1.0): eo:bands and raster:bands by position.
	es := decode(`{"href":"B04.tif","eo:bands":[{"name":"B04","common_name":"red"}],
		"raster:bands":[{"nodata":0,"data_type":"uint16","scale":0.0001,"offset":-0.1}]}`)
	b := es.Bands()
	if len(b) != 1 || b[0].Name != "B04" || b[0].CommonName != "red" || *b[0].Scale != 0.0001 || *b[0].Offset != -0.1 ||
		*b[0].NoData != 0 || b[0].DataType != "uint16" || b[0].Calibrated != "raster:bands" {
		t.Fatalf("earth search: %+v", b)
	}
	// The Planetary Computer: eo:bands only, nothing calibrated.
	pc := decode(`{"href":"B04.tif","eo:bands":[{"name":"B04","common_name":"Red "}]}`)
	if b := pc.Bands(); len(b) != 1 || b[0].CommonName != "red" || b[0].Scale != nil || b[0].Calibrated != "" {
		t.Fatalf("planetary computer: %+v", b)
	}
	// STAC 1.1: bands with eo:common_name and raster:scale / raster:offset, nodata "nan".
	v11 := decode(`{"href":"x.tif","bands":[{"name":"b1","eo:common_name":"nir","raster:scale":2.75e-5,"raster:offset":-0.2,"nodata":"nan","data_type":"float32"}]}`)
	if b := v11.Bands(); len(b) != 1 || b[0].CommonName != "nir" || *b[0].Scale != 2.75e-5 || *b[0].Offset != -0.2 ||
		!math.IsNaN(*b[0].NoData) || b[0].Calibrated != "bands" {
		t.Fatalf("stac 1.1: %+v", b)
	}
	// raster:bands alone (a classification layer): the band is listed, unnamed.
	scl := decode(`{"href":"SCL.tif","raster:bands":[{"nodata":0,"data_type":"uint8"}]}`)
	if b := scl.Bands(); len(b) != 1 || b[0].Name != "" || *b[0].NoData != 0 {
		t.Fatalf("scl: %+v", b)
	}
	if b := decode(`{"href":"x.json"}`).Bands(); b != nil {
		t.Fatalf("no bands: %+v", b)
	}
}
