variable "kubeconfig_path" {
  description = "The kubeconfig file of the cluster that runs Temporal."
  type        = string
  default     = "~/.kube/config"
}

variable "kube_context" {
  description = "The kubeconfig context to use; null for the current one."
  type        = string
  default     = null
}

variable "namespace" {
  description = "Namespace for taskgate (created)."
  type        = string
  default     = "taskgate"
}

variable "image" {
  description = "The taskgate image (built from the repository's Dockerfile and pushed to a registry the cluster pulls from), by tag or digest."
  type        = string
}

variable "temporal_address" {
  description = "The Temporal frontend Service, host:port. The Temporal Helm chart installed as release \"temporal\" in namespace \"temporal\" names it temporal-frontend."
  type        = string
  default     = "temporal-frontend.temporal.svc.cluster.local:7233"
}

variable "temporal_namespace" {
  description = "The Temporal namespace the workflows run in."
  type        = string
  default     = "default"
}

variable "mapping_file" {
  description = "Path of the mapping file to serve; null for tools.yaml beside this file, which maps the workflows of taskgate's example worker (task queue taskgate-examples)."
  type        = string
  default     = null
}

variable "token_keys" {
  description = "The token keys (TF_VAR_token_keys=$(taskgate token new-key)). They end up in the Terraform state; use the module's token_keys_secret_name with a Secret managed elsewhere where the state is not encrypted."
  type        = string
  sensitive   = true
}

variable "client_api_key" {
  description = "The API key MCP clients send as `Authorization: Bearer KEY` (the mapping's auth.apiKeys entry for principal mcp-clients): TF_VAR_client_api_key=$(openssl rand -base64 32)."
  type        = string
  sensitive   = true
}
