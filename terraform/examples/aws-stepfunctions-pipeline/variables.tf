variable "region" {
  description = "AWS region of the state machines and of taskgate."
  type        = string
}

variable "name" {
  description = "Name of taskgate's resources, and prefix of the sample state machine's."
  type        = string
  default     = "taskgate"
}

variable "image" {
  description = "The taskgate image to run (built from the repository's Dockerfile and pushed to ECR), by tag or digest."
  type        = string
}

variable "token_keys_secret_arn" {
  description = "ARN of the Secrets Manager secret holding the token keys (`aws secretsmanager create-secret --name taskgate/token-keys --secret-string \"$(taskgate token new-key)\"`)."
  type        = string
}

variable "client_api_key_secret_arn" {
  description = "ARN of the Secrets Manager secret holding the API key MCP clients send as `Authorization: Bearer KEY` (the mapping's auth.apiKeys entry for principal mcp-clients)."
  type        = string
}

variable "pipelines" {
  description = "The existing state machines to serve next to the sample, one MCP tool each: tool name, description, state machine (or version or alias) ARN, and the JSON Schema of its arguments as JSON."
  type = list(object({
    tool              = string
    description       = string
    state_machine_arn = string
    input_schema      = optional(string, "{\"type\": \"object\"}")
  }))
  default = []
}

variable "vpc_id" {
  description = "VPC for the load balancer and the tasks."
  type        = string
}

variable "load_balancer_subnet_ids" {
  description = "Public subnets (two Availability Zones or more) for the load balancer; private ones with internal = true."
  type        = list(string)
}

variable "service_subnet_ids" {
  description = "Private subnets with a route to the AWS APIs (NAT or VPC endpoints) for the tasks."
  type        = list(string)
}

variable "internal" {
  description = "Whether the load balancer is internal."
  type        = bool
  default     = false
}

variable "allowed_cidr_blocks" {
  description = "Networks of the MCP clients allowed to reach the load balancer."
  type        = list(string)
}

variable "certificate_arn" {
  description = "ACM certificate covering domain_name."
  type        = string
}

variable "domain_name" {
  description = "DNS name of taskgate, covered by the certificate."
  type        = string
}

variable "route53_zone_id" {
  description = "Route 53 zone in which to create domain_name; null to create the record yourself."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource (the provider's default_tags)."
  type        = map(string)
  default     = {}
}
