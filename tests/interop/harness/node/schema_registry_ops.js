/*
 * The Schema Registry commands of kafkajs_harness.js, on @kafkajs/confluent-schema-registry (required
 * only when one of them runs):
 *
 *   sr-produce {bootstrap, registry, topic, schema, values, subject?="<topic>-value", auth?, updateConfig?}
 *       registers schema (Avro, as JSON text) under subject, encodes each value with the id it got,
 *       and sends them with a KafkaJS producer
 *       -> registered {subject, id, latest_id}; done {sent, offsets}
 *   sr-decode {registry, values_b64, auth?}
 *       decodes each registry-framed value (magic byte 0, the schema id) through the registry
 *       -> decoded {index, schema_id, value} | decode_error {index, error, message}; done {count}
 *   sr-call {registry, auth?, calls: [{op: "register", subject, schema} | {op: "latest", subject}]}
 *       one result {op, ...} or error {op, error, message, status} line per call
 *
 * auth: {username, password} (HTTP Basic).
 */
'use strict'

function registryOf(a) {
  const { SchemaRegistry } = require('@kafkajs/confluent-schema-registry')
  if (!a.registry) throw Object.assign(new Error('missing argument: registry'), { name: 'UsageError' })
  return new SchemaRegistry({ host: a.registry, auth: a.auth || undefined, retry: { retries: 0 } })
}

function avro(schema) {
  const { SchemaType } = require('@kafkajs/confluent-schema-registry')
  return { type: SchemaType.AVRO, schema: typeof schema === 'string' ? schema : JSON.stringify(schema) }
}

function makeCommands({ emit, client, errorFields }) {
  async function srProduce(a) {
    const registry = registryOf(a)
    const subject = a.subject || `${a.topic}-value`
    const { id } = await registry.register(avro(a.schema), { subject, updateConfig: Boolean(a.updateConfig) })
    emit({ type: 'registered', subject, id, latest_id: await registry.getLatestSchemaId(subject) })
    const messages = []
    for (const v of a.values || []) messages.push({ value: await registry.encode(id, v) })
    const producer = client(a).producer()
    await producer.connect()
    try {
      const meta = await producer.send({ topic: a.topic, messages, acks: -1 })
      emit({ type: 'done', sent: messages.length, offsets: meta.map(m => Number(m.baseOffset)) })
    } finally {
      await producer.disconnect()
    }
    return 0
  }

  async function srDecode(a) {
    const registry = registryOf(a)
    const values = a.values_b64 || []
    for (let i = 0; i < values.length; i++) {
      const buf = Buffer.from(values[i], 'base64')
      try {
        const value = await registry.decode(buf)
        emit({ type: 'decoded', index: i, schema_id: buf.readInt32BE(1), value })
      } catch (e) {
        emit(errorFields(e, { type: 'decode_error', index: i }))
      }
    }
    emit({ type: 'done', count: values.length })
    return 0
  }

  async function srCall(a) {
    const registry = registryOf(a)
    for (const call of a.calls || []) {
      try {
        if (call.op === 'register') {
          const { id } = await registry.register(avro(call.schema), { subject: call.subject })
          emit({ type: 'result', op: call.op, id })
        } else if (call.op === 'latest') {
          emit({ type: 'result', op: call.op, id: await registry.getLatestSchemaId(call.subject) })
        } else {
          throw Object.assign(new Error(`unknown op ${call.op}`), { name: 'UsageError' })
        }
      } catch (e) {
        emit(errorFields(e, { type: 'error', op: call.op, status: e && e.status != null ? e.status : null }))
      }
    }
    return 0
  }

  return { 'sr-produce': srProduce, 'sr-decode': srDecode, 'sr-call': srCall }
}

module.exports = { makeCommands }
