package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxd/ctxd/daemon"
	"github.com/ctxd/ctxd/index/embed"
)

func (c *cli) modelCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "model", Short: "Manage embedding models"}
	var opts embed.FetchOptions
	modelsDir := filepath.Dir(daemon.DefaultConfig().ModelDir)
	pull := &cobra.Command{
		Use:   "pull URL",
		Short: "Download a model directory published at URL",
		Long: `Download a model directory published at URL: URL/ctxd-model.json, URL/model.onnx,
URL/model.onnx.data when published (the weights of a graph that keeps them beside it),
and URL/tokenizer.json (or URL/vocab.txt). The model lands in --models-dir/<id>
only once every file is complete; point the daemon at it with --model-dir.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			client := &http.Client{Timeout: 30 * time.Minute}
			dir, err := embed.Fetch(cmd.Context(), client, args[0], modelsDir, opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "model saved in %s\nstart the daemon with: ctxd serve --model-dir %s\n", dir, dir)
			return nil
		},
	}
	pull.Flags().StringVar(&modelsDir, "models-dir", modelsDir, "directory that holds model directories")
	pull.Flags().StringVar(&opts.ModelSHA256, "sha256", "", "expected SHA-256 of model.onnx")
	pull.Flags().StringVar(&opts.DataSHA256, "data-sha256", "", "expected SHA-256 of model.onnx.data, the weights beside the graph (then required)")
	pull.Flags().Int64Var(&opts.MaxBytes, "max-bytes", 0, "largest file accepted (default 2 GiB)")
	cmd.AddCommand(pull)
	return cmd
}
