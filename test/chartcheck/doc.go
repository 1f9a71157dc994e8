// Package chartcheck holds the offline checks of taskgate's Helm chart (charts/taskgate), run by
// scripts/deploy-checks: Helm's own lint; the chart rendered by Helm's own engine, its values
// checked against values.schema.json, for the default values and for each ci/*-values.yaml; every
// rendered object decoded strictly into its Kubernetes API type; values the schema must refuse;
// serve --replicas; and the pod the chart runs compared with the one the Terraform module
// terraform/modules/taskgate-kubernetes runs.
//
// It is a module of its own so that Helm, the Kubernetes API types and HCL stay out of taskgate's
// go.mod, and out of test/deploycheck's, whose tests run next to the engines.
package chartcheck
