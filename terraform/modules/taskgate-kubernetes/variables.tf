# ---------------------------------------------------------------------------------------------------
# What to run
# ---------------------------------------------------------------------------------------------------

variable "name" {
  description = "Name of the Deployment, Service, ConfigMap, Secrets, ServiceAccount, HorizontalPodAutoscaler and PodDisruptionBudget, and the app.kubernetes.io/instance label."
  type        = string
  default     = "taskgate"

  validation {
    condition     = can(regex("^[a-z0-9]([a-z0-9-]{0,50}[a-z0-9])?$", var.name))
    error_message = "name must be a DNS label of at most 52 characters: lower-case letters, digits and hyphens."
  }
}

variable "namespace" {
  description = "Namespace to deploy into."
  type        = string
  default     = "taskgate"
}

variable "create_namespace" {
  description = "Whether to create the namespace (false: it exists already, for example the Temporal cluster's own)."
  type        = bool
  default     = true
}

variable "image" {
  description = "The taskgate container image, built from the repository's Dockerfile, by tag or digest."
  type        = string
}

variable "image_pull_policy" {
  description = "When the kubelet pulls the image: IfNotPresent, Always or Never."
  type        = string
  default     = "IfNotPresent"
}

variable "image_pull_secrets" {
  description = "Names of docker-registry Secrets in the namespace for a private registry."
  type        = list(string)
  default     = []
}

variable "extra_args" {
  description = "Arguments added to `taskgate serve --config /etc/taskgate/tools.yaml --http :PORT`, for example [\"--no-task-clients\", \"wait\"], or the flags later releases add (log format, --insecure-no-auth)."
  type        = list(string)
  default     = []
}

variable "container_port" {
  description = "Port taskgate listens on in the pod (serve --http :PORT)."
  type        = number
  default     = 8080
}

# ---------------------------------------------------------------------------------------------------
# Mapping, Temporal and secrets
# ---------------------------------------------------------------------------------------------------

variable "mapping_yaml" {
  description = "The mapping file's content (for example file(\"tools.yaml\")), stored in a ConfigMap and mounted at /etc/taskgate/tools.yaml. Engine blocks may refer to the environment: $${TEMPORAL_ADDRESS}, $${TEMPORAL_NAMESPACE}, apiKeyEnv: TEMPORAL_API_KEY, and the names in environment; a temporal block without tls: takes temporal_tls from the TEMPORAL_TLS_* variables."
  type        = string
}

variable "temporal_address" {
  description = "The Temporal frontend's gRPC address, host:port, as TEMPORAL_ADDRESS: in the same cluster usually temporal-frontend.NAMESPACE.svc.cluster.local:7233 (the Temporal Helm chart's frontend Service); for Temporal Cloud NAMESPACE.ACCOUNT.tmprl.cloud:7233. null when the mapping has no Temporal engine."
  type        = string
  default     = null

  validation {
    condition     = var.temporal_address == null || can(regex("^[^:/\\s]+:[0-9]+$", var.temporal_address))
    error_message = "temporal_address must be host:port, without a scheme."
  }
}

variable "temporal_namespace" {
  description = "The Temporal namespace, as TEMPORAL_NAMESPACE."
  type        = string
  default     = "default"
}

variable "temporal_tls" {
  description = "TLS to the Temporal frontend, PEM-encoded: ca_pem (a private CA; null for the system roots), cert_pem and key_pem (mTLS client certificate), server_name (when it differs from the address's host). Stored in a Secret mounted at /etc/taskgate/temporal/ and passed as the variables the Temporal SDK reads (TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_NAME), which an engine block without tls: uses; null for plaintext."
  type = object({
    ca_pem      = optional(string)
    cert_pem    = optional(string)
    key_pem     = optional(string)
    server_name = optional(string)
  })
  default   = null
  sensitive = true
}

variable "temporal_api_key" {
  description = "A Temporal Cloud API key, as TEMPORAL_API_KEY from a Secret (the mapping says apiKeyEnv: TEMPORAL_API_KEY); null for none."
  type        = string
  default     = null
  sensitive   = true
}

variable "token_keys" {
  description = "TASKGATE_TOKEN_KEYS, the keys that seal task ids: `ID:BASE64[,ID:BASE64...]` as printed by `taskgate token new-key`, stored in a Secret. Set this or token_keys_secret_name. It is kept in the Terraform state: prefer token_keys_secret_name where the state is not encrypted."
  type        = string
  default     = null
  sensitive   = true
}

variable "token_keys_secret_name" {
  description = "Instead of token_keys: the name of an existing Secret in the namespace (External Secrets, Sealed Secrets, kubectl) whose key TASKGATE_TOKEN_KEYS holds the token keys."
  type        = string
  default     = null
}

variable "api_keys" {
  description = "API keys of HTTP callers, for the mapping's auth.apiKeys: environment variable name (the entry's keyEnv) => key. Stored in the module's Secret."
  type        = map(string)
  default     = {}
  sensitive   = true
}

variable "oauth" {
  description = "OAuth settings for the mapping's auth.oauth, passed as TASKGATE_OAUTH_ISSUER, TASKGATE_OAUTH_AUDIENCE, TASKGATE_OAUTH_JWKS_URL and TASKGATE_OAUTH_SCOPES (space-separated); null for none."
  type = object({
    issuer   = string
    audience = string
    jwks_url = optional(string)
    scopes   = optional(list(string), [])
  })
  default = null
}

variable "public_url" {
  description = "The MCP URL clients use through your Ingress or Gateway (https://.../mcp), passed as TASKGATE_MCP_URL for the resource URL of OAuth protected-resource metadata; null when clients use the in-cluster Service."
  type        = string
  default     = null
}

variable "environment" {
  description = "More plain environment variables for taskgate (for the mapping's $${VAR} and the AWS SDK, for example AWS_REGION for Step Functions engines)."
  type        = map(string)
  default     = {}
}

variable "stepfunctions_events_topic_arn" {
  description = "The SNS topic of Step Functions' status change events (the output topic_arn of taskgate-stepfunctions-events), passed as TASKGATE_SFN_EVENTS_TOPIC_ARN for the mapping's events: {topicArn: \"$${TASKGATE_SFN_EVENTS_TOPIC_ARN}\"}; null for none. The pods' IAM role (IRSA, EKS Pod Identity) needs taskgate-iam-policy's events statements for it."
  type        = string
  default     = null

  validation {
    condition     = var.stepfunctions_events_topic_arn == null || can(regex("^arn:aws[a-z-]*:sns:[a-z]{2}(-[a-z]+)+-[0-9]+:[0-9]{12}:[A-Za-z0-9_.-]+$", coalesce(var.stepfunctions_events_topic_arn, "x")))
    error_message = "stepfunctions_events_topic_arn must be an SNS topic ARN: arn:PARTITION:sns:REGION:ACCOUNT:NAME."
  }
}

# ---------------------------------------------------------------------------------------------------
# Restate
# ---------------------------------------------------------------------------------------------------

variable "restate" {
  description = "The Restate server of the mapping's restate engine blocks: ingress_url (RESTATE_INGRESS_URL, in the same cluster usually http://restate.NAMESPACE.svc.cluster.local:8080) and admin_url (RESTATE_ADMIN_URL, the admin API, usually port 9070), which a block without ingress and admin uses; null for none."
  type = object({
    ingress_url = string
    admin_url   = string
  })
  default = null

  validation {
    condition     = var.restate == null || alltrue([for u in [try(var.restate.ingress_url, ""), try(var.restate.admin_url, "")] : can(regex("^https?://[^/\\s]+", u))])
    error_message = "restate.ingress_url and restate.admin_url must be http:// or https:// URLs, such as http://restate.restate.svc.cluster.local:8080 and :9070."
  }
}

variable "restate_auth_token" {
  description = "The API token taskgate presents to the Restate ingress and admin API (Restate Cloud, or an authenticating proxy), as RESTATE_AUTH_TOKEN from the module's Secret; null for none. It is kept in the Terraform state: prefer restate_auth_token_secret_name where the state is not encrypted."
  type        = string
  default     = null
  sensitive   = true
}

variable "restate_auth_token_secret_name" {
  description = "Instead of restate_auth_token: the name of an existing Secret in the namespace whose key RESTATE_AUTH_TOKEN holds the Restate API token, passed as RESTATE_AUTH_TOKEN."
  type        = string
  default     = null
}

# ---------------------------------------------------------------------------------------------------
# Pods, probes and scaling
# ---------------------------------------------------------------------------------------------------

variable "replicas" {
  description = "Replicas at creation; the HorizontalPodAutoscaler takes over between min_replicas and max_replicas."
  type        = number
  default     = 2
}

variable "min_replicas" {
  description = "Fewest replicas the HorizontalPodAutoscaler keeps."
  type        = number
  default     = 2
}

variable "max_replicas" {
  description = "Most replicas the HorizontalPodAutoscaler runs; each pod reads the engines at this share of the mapping's read budgets (serve --replicas)."
  type        = number
  default     = 6
}

variable "cpu_target_percent" {
  description = "Average CPU utilization (of the request) the HorizontalPodAutoscaler keeps."
  type        = number
  default     = 70
}

variable "pdb_min_available" {
  description = "Pods a voluntary disruption (node drain, upgrade) must leave running; 0 for no PodDisruptionBudget."
  type        = number
  default     = 1
}

variable "liveness_path" {
  description = "Path of the liveness and startup probes on ops_port: /healthz (the process serves)."
  type        = string
  default     = "/healthz"
}

variable "readiness_path" {
  description = "Path of the readiness probe on ops_port: /readyz, 503 while an engine does not answer or a mapped target is missing, so that such pods leave the Service without a restart."
  type        = string
  default     = "/readyz"
}

variable "ops_port" {
  description = "Port of taskgate's operations listener in the pod (serve --ops-http :PORT): /healthz, /readyz and /metrics, apart from MCP and not in the Service."
  type        = number
  default     = 9090
}

variable "prometheus_scrape" {
  description = "Annotate the pods with prometheus.io/scrape, port (ops_port) and path (/metrics), for Prometheus configurations that discover pods by these annotations."
  type        = bool
  default     = true
}

variable "resources" {
  description = "Container resources: cpu_request (the HPA's 100%), memory_request, memory_limit, and cpu_limit (null for none, so a busy pod is not throttled)."
  type = object({
    cpu_request    = optional(string, "100m")
    memory_request = optional(string, "64Mi")
    memory_limit   = optional(string, "256Mi")
    cpu_limit      = optional(string)
  })
  default = {}
}

variable "service_type" {
  description = "Type of the Service: ClusterIP (clients or an Ingress in the cluster), or LoadBalancer / NodePort."
  type        = string
  default     = "ClusterIP"
}

variable "service_port" {
  description = "Port of the Service (it forwards to container_port)."
  type        = number
  default     = 80
}

variable "service_annotations" {
  description = "Annotations of the Service, for example a cloud load balancer's settings."
  type        = map(string)
  default     = {}
}

variable "service_account_annotations" {
  description = "Annotations of the ServiceAccount, for example eks.amazonaws.com/role-arn for Step Functions engines through IRSA (the role's policy: modules/taskgate-iam-policy)."
  type        = map(string)
  default     = {}
}

variable "automount_service_account_token" {
  description = "Whether pods mount a Kubernetes API token. taskgate never calls the Kubernetes API; IRSA and EKS Pod Identity mount their own tokens."
  type        = bool
  default     = false
}

variable "pod_annotations" {
  description = "More annotations of the pods."
  type        = map(string)
  default     = {}
}

variable "labels" {
  description = "More labels of every object."
  type        = map(string)
  default     = {}
}

variable "node_selector" {
  description = "Node labels the pods must run on."
  type        = map(string)
  default     = {}
}

variable "tolerations" {
  description = "Tolerations of the pods: { key, operator (Equal or Exists), value, effect }."
  type = list(object({
    key      = optional(string)
    operator = optional(string, "Equal")
    value    = optional(string)
    effect   = optional(string)
  }))
  default = []
}
