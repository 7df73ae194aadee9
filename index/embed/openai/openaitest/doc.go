// Package openaitest is a test helper: an HTTP server on loopback that
// speaks the OpenAI embeddings API (POST /v1/embeddings) and computes real
// vectors with the local ONNX model (an embed.Worker), so that tests and
// benchmarks of the remote provider compare its vectors with the local
// ones. Faults can be injected per request (a status with Retry-After, a
// malformed answer, a delay), and the server can be stopped and started
// again on the same address.
//
// It is for tests only: nothing in the daemon imports it.
package openaitest
