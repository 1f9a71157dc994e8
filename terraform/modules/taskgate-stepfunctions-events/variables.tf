variable "name" {
  description = "Name of the SNS topic and of the EventBridge rule: letters, digits, hyphens and underscores, at most 64 characters."
  type        = string
  default     = "taskgate-sfn-events"

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.name))
    error_message = "name must be 1 to 64 letters, digits, hyphens and underscores."
  }
}

variable "state_machine_arns" {
  description = "The state machines whose executions' status changes taskgate hears of, as state machine, version or alias ARNs (the events name the state machine itself, so versions and aliases count as their state machine). Empty: every state machine of the account and region, which sends taskgate's replicas the status changes of executions they do not serve too (each is a message every replica receives)."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for arn in var.state_machine_arns : can(regex("^arn:[a-z0-9-]+:states:[a-z0-9-]+:[0-9]{12}:stateMachine:[^:]+(:[^:]+)?$", arn))])
    error_message = "state_machine_arns must be Step Functions state machine ARNs: arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME, optionally followed by :VERSION or :ALIAS."
  }
}

variable "kms_master_key_id" {
  description = "A customer-managed KMS key that encrypts the topic; null for none. Its key policy must let events.amazonaws.com use it (kms:GenerateDataKey, kms:Decrypt), and the replicas' queues are not encrypted with it."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for the topic and the rule."
  type        = map(string)
  default     = {}
}
