package transport

import (
	"bytes"
	"encoding/json"
)

// nullID is the id of an error answering a message whose id is unknown.
var nullID = json.RawMessage("null")

// messageID is the id member of a JSON-RPC message as it was sent, when it
// is a valid id (a string or a number); null otherwise, as JSON-RPC 2.0
// asks for an error about a message whose id cannot be read.
func messageID(data []byte) json.RawMessage {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &msg) != nil || len(msg.ID) == 0 {
		return nullID
	}
	switch c := msg.ID[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return msg.ID
	}
	return nullID
}

// jsonRPCErrorResponse is a JSON-RPC 2.0 error response; ID is always
// written, null included, as the specification requires.
type jsonRPCErrorResponse struct {
	JSONRPC string             `json:"jsonrpc"`
	ID      json.RawMessage    `json:"id"`
	Error   jsonRPCErrorObject `json:"error"`
}

type jsonRPCErrorObject struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// jsonRPCError is the newline-terminated error response for id.
func jsonRPCError(id json.RawMessage, code int64, message string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(jsonRPCErrorResponse{JSONRPC: "2.0", ID: id, Error: jsonRPCErrorObject{Code: code, Message: message}})
	return b.Bytes()
}
