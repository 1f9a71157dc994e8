// Package deploycheck holds the offline checks of taskgate's deployment files, run by
// scripts/deploy-checks: the Terraform under terraform/ (every file parses; variables are typed,
// described and used; outputs are described; references resolve; module calls pass known and
// required variables), the IAM policy the Terraform builds (the same statements as the Go
// generator stepfunctions.IAMPolicies, checked by running the taskgate-iam-policy module through
// OpenTofu), and the Dockerfile (pinned bases, a static CGO_ENABLED=0 build, a non-root user).
//
// It is a module of its own so that HCL and its dependencies stay out of taskgate's go.mod. Its
// tests need the OpenTofu binary: scripts/deploy-checks builds it once into the tools cache
// ($TASKGATE_TOOLS/bin) and passes it as TOFU. Without TOFU the tests that need it fail when
// CI is set, and skip with a message otherwise.
package deploycheck
