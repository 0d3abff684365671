#!/usr/bin/env node
/*
 * A command-line driver for KafkaJS, used by the mockbroker interop tests:
 *
 *   NODE_PATH=<cache>/node/node_modules node kafkajs_harness.js <command> [<json> | - | @file]
 *
 * Arguments are one JSON object (inline, "-" for stdin, "@path" for a file). Output is JSON lines
 * on stdout, each with a "type"; KafkaJS's own logs go to stderr. Exit codes: 0 the command ran
 * (per-record / per-operation errors are lines in the output), 1 fatal (a "fatal" line says why),
 * 2 bad usage, 3 the watchdog stopped a run that took longer than deadline_ms.
 *
 * Compression: KafkaJS has none and gzip built in. snappy comes from kafkajs-snappy (snappyjs, pure
 * JS; it writes RAW snappy, not the xerial framing Java uses, and reads both), lz4 from lz4js (pure
 * JS, the LZ4 frame format; the frame itself is built here, see lz4Frame), zstd from @bokuweb/zstd-wasm (compress, WebAssembly) and fzstd
 * (decompress, pure JS: frames without a content size, as zstd-jni streams write them). No native
 * builds. The package names are pinned in package.json next to this file.
 *
 * Bytes (keys, values, header values) come in as "name" (UTF-8 text) or "name_b64", and go out as
 * both "name" (left out when not valid UTF-8) and "name_b64"; null stays null.
 */
'use strict'

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'

const fs = require('fs')
const { TextDecoder } = require('util')

const HARNESS_VERSION = '1'
const DEFAULT_TIMEOUT_MS = 20000
const DEFAULT_DEADLINE_MS = 60000

const USAGE = `usage: kafkajs_harness.js <command> [<json-object> | - | @file]
Prints JSON lines on stdout (KafkaJS logs on stderr). Exit code 0: the command ran (failed records or
operations are lines in the output); 1: fatal (see the "fatal" line); 2: bad usage; 3: the watchdog
ended a run that outlived deadline_ms. Needs NODE_PATH=<cache>/node/node_modules.

JSON arguments common to all commands (all optional but bootstrap):
  bootstrap     "host:port[,host:port]"
  client        options for new Kafka({...}) (clientId, connectionTimeout, requestTimeout, retry, ssl,
                sasl, ...); sasl {mechanism: "oauthbearer", token: "<jwt>"} becomes an oauthBearerProvider
  timeout_ms    bound for each operation (default 20000)
  deadline_ms   the whole run; a watchdog exits with code 3 after it (default 60000)
  log_level     KafkaJS log level on stderr: OFF ERROR WARN INFO DEBUG (default WARN)

Records: {"topic"?, "partition"?, "timestamp"?, "key" | "key_b64", "value" | "value_b64",
          "headers": [{"key": "h", "value" | "value_b64": ...}]}

commands:
  version   {"type":"version","kafkajs":"2.2.4",...}
  produce   {topic, records, compression?="none", acks?=-1, sync?=false, producer?: {...}, send?: {...}}
            sync=false: one sendBatch -> sent_batch {topic,partition,base_offset,log_append_time}
            sync=true: one send per record -> sent {index,topic,partition,offset} | send_error
            then done {sent,failed}
  txn       {transactional_id, transactions: [{records, end?="commit"|"abort"}], compression?}
            -> sent_batch {txn,...}; committed|aborted {txn} | txn_error {txn,...}; done
  consume   {topic | topics, group_id?, seek?="beginning", max_records?, until_end?, idle_ms?,
             commit?=false, read_committed?=true, consumer?: {...}}
            seek: "beginning" | "end" | "committed" | {"<partition>": offset} | {"timestamp": ms}
            (single topic for the map and timestamp forms; KafkaJS only consumes in a group)
            -> record {topic,partition,offset,timestamp,key,key_b64,value,value_b64,headers};
               done {count,stopped,end_offsets}
  admin     {op, ...} or {ops: [...]}; one result|error line per op:
            listTopics; createTopics {topics: [{name, partitions?, replication_factor?, configs?}]};
            deleteTopics {topics}; fetchTopicMetadata {topics}; fetchTopicOffsets {topic};
            fetchTopicOffsetsByTimestamp {topic, timestamp}; describeCluster
  codecs    {emit_bytes?} compresses and decompresses a buffer with each codec, no broker
            -> codec {codec, ok, size_bytes, compressed_b64?, plain_b64?}
            {compress: {"<codec>": "<base64>"}} -> compressed {codec, ok, compressed_b64}
            {decompress: {"<codec>": "<base64>"}} -> decompressed {codec, ok, plain_b64}
  sr-produce, sr-decode, sr-call  @kafkajs/confluent-schema-registry against a Schema Registry
            (schema_registry_ops.js: arguments there)
`

// ------------------------------------------------------------------ output

// Only emit() writes to stdout, synchronously (nothing lost at process.exit).
function emit(obj) {
  fs.writeSync(1, JSON.stringify(obj) + '\n')
}
console.log = (...args) => console.error(...args)
console.info = (...args) => console.error(...args)

const utf8 = new TextDecoder('utf-8', { fatal: true })

function putBytes(o, name, buf) {
  if (buf == null) {
    o[name] = null
    o[name + '_b64'] = null
    return o
  }
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(String(buf), 'utf8')
  try {
    o[name] = utf8.decode(b)
  } catch (e) {
    // not UTF-8: only the base64 form
  }
  o[name + '_b64'] = b.toString('base64')
  return o
}

function bytesIn(o, name) {
  if (o[name + '_b64'] != null) return Buffer.from(o[name + '_b64'], 'base64')
  if (o[name] != null) return Buffer.from(String(o[name]), 'utf8')
  return null
}

function errorFields(e, extra = {}) {
  const out = { ...extra }
  out.error = (e && e.name) || 'Error'
  out.error_type = (e && e.type) || null // KafkaJS protocol error name, e.g. UNKNOWN_TOPIC_OR_PARTITION
  out.message = e && e.message != null ? String(e.message) : String(e)
  out.retriable = Boolean(e && e.retriable)
  const cause = e && (e.originalError || e.cause)
  if (cause) out.cause = { error: cause.name || 'Error', error_type: cause.type || null, message: String(cause.message) }
  return out
}

// ------------------------------------------------------------------ KafkaJS and codecs

const { Kafka, logLevel, CompressionTypes, CompressionCodecs, Partitioners } = require('kafkajs')
const SnappyCodec = require('kafkajs-snappy')
const lz4js = require('lz4js')
const lz4xxh32 = require('lz4js/xxh32.js')
const fzstd = require('fzstd')
const zstdWasm = require('@bokuweb/zstd-wasm')

let zstdReady = null
const ensureZstd = () => (zstdReady = zstdReady || zstdWasm.init())

// lz4js.compress() writes frames whose FLG byte says "dependent blocks", which Kafka's Java LZ4 reader
// (and so a real broker) rejects: "Dependent block stream is unsupported". So build the frame here:
// 64 KB blocks, each compressed with a fresh hash table (truly independent), FLG = version 01 |
// block independence, BD = 64 KB, header checksum = second byte of xxh32(FLG, BD); no checksums.
function lz4Frame(src) {
  const BLOCK = 64 * 1024
  const header = Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0])
  header[6] = (lz4xxh32.hash(0, header, 4, 2) >>> 8) & 0xff
  const parts = [header]
  for (let off = 0; off < src.length; off += BLOCK) {
    const block = src.subarray(off, Math.min(off + BLOCK, src.length))
    const out = Buffer.alloc(lz4js.compressBound(block.length))
    const n = lz4js.compressBlock(block, out, 0, block.length, new Uint32Array(1 << 16))
    const size = Buffer.alloc(4)
    if (n === 0 || n >= block.length) {
      size.writeUInt32LE((0x80000000 | block.length) >>> 0) // stored uncompressed
      parts.push(size, Buffer.from(block))
    } else {
      size.writeUInt32LE(n)
      parts.push(size, out.subarray(0, n))
    }
  }
  parts.push(Buffer.alloc(4)) // end mark
  return Buffer.concat(parts)
}

const LZ4Codec = () => ({
  async compress(encoder) {
    return lz4Frame(encoder.buffer)
  },
  async decompress(buffer) {
    return Buffer.from(lz4js.decompress(buffer))
  },
})

const ZstdCodec = () => ({
  async compress(encoder) {
    await ensureZstd()
    return Buffer.from(zstdWasm.compress(encoder.buffer, 3))
  },
  async decompress(buffer) {
    return Buffer.from(fzstd.decompress(buffer))
  },
})

CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec
CompressionCodecs[CompressionTypes.LZ4] = LZ4Codec
CompressionCodecs[CompressionTypes.ZSTD] = ZstdCodec

const CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
}

function compressionOf(name) {
  const c = CODECS[name == null ? 'none' : name]
  if (c === undefined) throw usageError(`compression must be one of ${Object.keys(CODECS).join(', ')}`)
  return c
}

const LOG_LEVELS = {
  OFF: logLevel.NOTHING,
  NOTHING: logLevel.NOTHING,
  ERROR: logLevel.ERROR,
  WARN: logLevel.WARN,
  INFO: logLevel.INFO,
  DEBUG: logLevel.DEBUG,
  TRACE: logLevel.DEBUG,
}

const stderrLogCreator = () => ({ namespace, label, log }) => {
  const { message, timestamp, logger, ...rest } = log
  const extra = Object.keys(rest).length ? ' ' + JSON.stringify(rest) : ''
  process.stderr.write(`${timestamp} ${label} [${namespace}] ${message}${extra}\n`)
}

function usageError(message) {
  const e = new Error(message)
  e.name = 'UsageError'
  return e
}

function client(a) {
  if (!a.bootstrap) throw usageError('missing argument: bootstrap')
  const level = LOG_LEVELS[String(a.log_level || 'WARN').toUpperCase()]
  return new Kafka({
    clientId: 'kafkajs-harness',
    brokers: String(a.bootstrap).split(','),
    logLevel: level === undefined ? logLevel.WARN : level,
    logCreator: stderrLogCreator,
    requestTimeout: timeoutOf(a),
    retry: { retries: 5, maxRetryTime: Math.max(1000, Math.floor(timeoutOf(a) / 2)) },
    ...withOauthProvider(a.client || {}),
  })
}

// JSON cannot carry KafkaJS's oauthBearerProvider function: a fixed token is given as sasl.token.
function withOauthProvider(options) {
  const sasl = options.sasl
  if (!sasl || String(sasl.mechanism).toLowerCase() !== 'oauthbearer' || sasl.token == null) return options
  const { token, ...rest } = sasl
  return { ...options, sasl: { ...rest, oauthBearerProvider: async () => ({ value: token }) } }
}

const timeoutOf = a => (a.timeout_ms == null ? DEFAULT_TIMEOUT_MS : Number(a.timeout_ms))

function toMessage(r) {
  const m = { key: bytesIn(r, 'key'), value: bytesIn(r, 'value') }
  if (r.partition != null) m.partition = r.partition
  if (r.timestamp != null) m.timestamp = String(r.timestamp)
  if (r.headers) {
    const headers = {}
    for (const h of r.headers) {
      const v = bytesIn(h, 'value')
      if (v === null) {
        // record/v0 sizeOfHeaders calls Buffer.byteLength(null) before its null check: TypeError
        throw usageError(`KafkaJS cannot send a null header value (header ${h.key})`)
      }
      if (Object.prototype.hasOwnProperty.call(headers, h.key)) {
        headers[h.key] = [].concat(headers[h.key], [v])
      } else {
        headers[h.key] = v
      }
    }
    m.headers = headers
  }
  return m
}

function headersOut(headers) {
  const out = []
  for (const [key, value] of Object.entries(headers || {})) {
    for (const v of Array.isArray(value) ? value : [value]) out.push(putBytes({ key }, 'value', v))
  }
  return out
}

function requireRecords(a) {
  if (!Array.isArray(a.records)) throw usageError('missing argument: records')
  return a.records
}

function groupByTopic(records, defaultTopic) {
  const byTopic = new Map()
  for (const r of records) {
    const topic = r.topic || defaultTopic
    if (!topic) throw usageError('record without a topic and no default topic')
    if (!byTopic.has(topic)) byTopic.set(topic, [])
    byTopic.get(topic).push(toMessage(r))
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }))
}

function batchLines(metadata, extra) {
  for (const md of metadata) {
    emit({
      type: 'sent_batch',
      ...extra,
      topic: md.topicName,
      partition: md.partition,
      base_offset: md.baseOffset == null ? null : Number(md.baseOffset),
      log_append_time: md.logAppendTime == null || md.logAppendTime === '-1' ? null : Number(md.logAppendTime),
      log_start_offset: md.logStartOffset == null ? null : Number(md.logStartOffset),
      error_code: md.errorCode,
    })
  }
}

// ------------------------------------------------------------------ commands

async function version() {
  const pkg = require('kafkajs/package.json')
  emit({ type: 'version', kafkajs: pkg.version, node: process.versions.node, harness: HARNESS_VERSION })
  return 0
}

async function produce(a) {
  const records = requireRecords(a)
  const producer = client(a).producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    ...(a.producer || {}),
  })
  const sendOpts = {
    acks: a.acks == null ? -1 : a.acks,
    timeout: timeoutOf(a),
    compression: compressionOf(a.compression),
    ...(a.send || {}),
  }
  let sent = 0
  let failed = 0
  await producer.connect()
  try {
    if (a.sync) {
      for (let i = 0; i < records.length; i++) {
        const [tm] = groupByTopic([records[i]], a.topic)
        try {
          const [md] = await producer.send({ ...tm, ...sendOpts })
          emit({
            type: 'sent',
            index: i,
            topic: md.topicName,
            partition: md.partition,
            offset: md.baseOffset == null ? null : Number(md.baseOffset),
            timestamp: md.logAppendTime == null || md.logAppendTime === '-1' ? null : Number(md.logAppendTime),
          })
          sent++
        } catch (e) {
          emit(errorFields(e, { type: 'send_error', index: i }))
          failed++
        }
      }
    } else {
      try {
        batchLines(await producer.sendBatch({ topicMessages: groupByTopic(records, a.topic), ...sendOpts }), {})
        sent = records.length
      } catch (e) {
        emit(errorFields(e, { type: 'send_error', index: null }))
        failed = records.length
      }
    }
  } finally {
    await producer.disconnect()
  }
  emit({ type: 'done', sent, failed })
  return 0
}

async function txn(a) {
  if (!a.transactional_id) throw usageError('missing argument: transactional_id')
  if (!Array.isArray(a.transactions)) throw usageError('missing argument: transactions')
  const producer = client(a).producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    transactionalId: a.transactional_id,
    idempotent: true,
    maxInFlightRequests: 1,
    ...(a.producer || {}),
  })
  await producer.connect()
  try {
    for (let t = 0; t < a.transactions.length; t++) {
      const tx = a.transactions[t]
      const end = tx.end || 'commit'
      let stage = 'begin'
      let transaction = null
      try {
        transaction = await producer.transaction()
        stage = 'send'
        const topicMessages = groupByTopic(tx.records || [], a.topic)
        if (topicMessages.length) {
          batchLines(await transaction.sendBatch({
            topicMessages, acks: -1, timeout: timeoutOf(a), compression: compressionOf(a.compression),
          }), { txn: t })
        }
        stage = end
        if (end === 'commit') {
          await transaction.commit()
          emit({ type: 'committed', txn: t })
        } else if (end === 'abort') {
          await transaction.abort()
          emit({ type: 'aborted', txn: t })
        } else {
          throw usageError('end must be commit or abort')
        }
      } catch (e) {
        emit(errorFields(e, { type: 'txn_error', txn: t, stage }))
        if (transaction && transaction.isActive()) {
          try {
            await transaction.abort()
            emit({ type: 'aborted', txn: t })
          } catch (e2) {
            emit(errorFields(e2, { type: 'txn_error', txn: t, stage: 'abort' }))
            break
          }
        }
      }
    }
  } finally {
    await producer.disconnect()
  }
  emit({ type: 'done' })
  return 0
}

function recordJson(topic, partition, m) {
  const o = {
    type: 'record',
    topic,
    partition,
    offset: Number(m.offset),
    timestamp: m.timestamp == null ? null : Number(m.timestamp),
  }
  putBytes(o, 'key', m.key)
  putBytes(o, 'value', m.value)
  o.headers = headersOut(m.headers)
  return o
}

async function consume(a) {
  const topics = a.topics || (a.topic ? [a.topic] : null)
  if (!topics || !topics.length) throw usageError('missing argument: topic (or topics)')
  const timeout = timeoutOf(a)
  const seek = a.seek == null ? 'beginning' : a.seek
  const kafka = client(a)
  const max = a.max_records == null ? null : Number(a.max_records)

  // Where each partition starts and ends, for until_end and for the seek forms that need offsets.
  const admin = kafka.admin()
  await admin.connect()
  const ends = new Map() // "topic/partition" -> {end, done}
  const seeks = [] // {topic, partition, offset}
  try {
    if (typeof seek === 'object' && seek.timestamp != null) {
      if (topics.length !== 1) throw usageError('a timestamp seek needs exactly one topic')
      for (const p of await admin.fetchTopicOffsetsByTimestamp(topics[0], Number(seek.timestamp))) {
        seeks.push({ topic: topics[0], partition: p.partition, offset: String(p.offset) })
      }
    } else if (typeof seek === 'object') {
      if (topics.length !== 1) throw usageError('a partition seek map needs exactly one topic')
      for (const [p, off] of Object.entries(seek)) {
        seeks.push({ topic: topics[0], partition: Number(p), offset: String(off) })
      }
    } else if (!['beginning', 'end', 'committed'].includes(seek)) {
      throw usageError(`seek must be beginning, end, committed, {"<partition>": offset} or {"timestamp": ms}: ${seek}`)
    }
    if (a.until_end) {
      for (const topic of topics) {
        for (const p of await admin.fetchTopicOffsets(topic)) {
          const key = `${topic}/${p.partition}`
          const explicit = seeks.find(s => s.topic === topic && s.partition === p.partition)
          const start = explicit ? Number(explicit.offset) : seek === 'end' ? Number(p.high) : Number(p.low)
          ends.set(key, { end: Number(p.high), done: start >= Number(p.high) && seek !== 'committed' })
        }
      }
    }
  } finally {
    await admin.disconnect()
  }

  const consumer = kafka.consumer({
    groupId: a.group_id || `kafkajs-harness-${process.pid}-${Date.now()}`,
    maxWaitTimeInMs: 500,
    readUncommitted: a.read_committed === false,
    ...(a.consumer || {}),
  })
  // A consumer that crashes (a non-retriable error such as GROUP_AUTHORIZATION_FAILED) says why.
  consumer.on(consumer.events.CRASH, event => emit(errorFields(event.payload.error, { type: 'crash' })))
  let count = 0
  let stopped = null
  let lastRecordAt = Date.now()
  const next = new Map() // "topic/partition" -> offset to commit
  let finish
  const finished = new Promise(resolve => {
    finish = reason => {
      if (stopped == null) {
        stopped = reason
        resolve()
      }
    }
  })
  const allDone = () => ends.size > 0 && [...ends.values()].every(e => e.done)

  await consumer.connect()
  try {
    if (a.until_end && allDone()) {
      finish('end')
    } else {
      await consumer.subscribe({ topics, fromBeginning: seek !== 'end' })
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: true,
        eachBatch: async ({ batch, resolveOffset }) => {
          for (const m of batch.messages) {
            if (stopped != null || (max != null && count >= max)) break
            emit(recordJson(batch.topic, batch.partition, m))
            count++
            lastRecordAt = Date.now()
            next.set(`${batch.topic}/${batch.partition}`, Number(m.offset) + 1)
            resolveOffset(m.offset)
          }
          if (max != null && count >= max) finish('max_records')
          const e = ends.get(`${batch.topic}/${batch.partition}`)
          if (e && Number(batch.lastOffset()) + 1 >= e.end) e.done = true
          if (a.until_end && allDone()) finish('end')
        },
      })
      for (const s of seeks) consumer.seek(s)
      if (max === 0) finish('max_records')
      const timer = setTimeout(() => finish('timeout'), timeout)
      const idle = a.idle_ms == null ? null : setInterval(() => {
        if (Date.now() - lastRecordAt >= Number(a.idle_ms)) finish('idle')
      }, 50)
      await finished
      clearTimeout(timer)
      if (idle) clearInterval(idle)
      if (a.commit && next.size) {
        const offsets = [...next].map(([k, offset]) => {
          const i = k.lastIndexOf('/')
          return { topic: k.slice(0, i), partition: Number(k.slice(i + 1)), offset: String(offset) }
        })
        try {
          await consumer.commitOffsets(offsets)
          emit({ type: 'committed', offsets: offsets.map(o => ({ ...o, offset: Number(o.offset) })) })
        } catch (e) {
          emit(errorFields(e, { type: 'commit_error' }))
        }
      }
    }
  } finally {
    await consumer.disconnect()
  }
  const endOffsets = a.until_end
    ? [...ends].map(([k, e]) => {
        const i = k.lastIndexOf('/')
        return { topic: k.slice(0, i), partition: Number(k.slice(i + 1)), offset: e.end }
      })
    : null
  emit({ type: 'done', count, stopped, end_offsets: endOffsets })
  return 0
}

async function adminCommand(a) {
  const ops = Array.isArray(a.ops) ? a.ops : a.op ? [a] : null
  if (!ops) throw usageError('missing argument: op (or ops)')
  const admin = client(a).admin()
  await admin.connect()
  try {
    for (const op of ops) {
      try {
        emit({ type: 'result', op: op.op, ...(await adminOp(admin, op, a)) })
      } catch (e) {
        emit(errorFields(e, { type: 'error', op: op.op }))
      }
    }
  } finally {
    await admin.disconnect()
  }
  return 0
}

async function adminOp(admin, op, a) {
  switch (op.op) {
    case 'listTopics':
      return { names: (await admin.listTopics()).sort() }
    case 'createTopics': {
      const created = await admin.createTopics({
        validateOnly: Boolean(op.validate_only),
        waitForLeaders: op.wait_for_leaders !== false,
        timeout: timeoutOf(a),
        topics: (op.topics || []).map(t => ({
          topic: t.name,
          numPartitions: t.partitions == null ? -1 : t.partitions,
          replicationFactor: t.replication_factor == null ? -1 : t.replication_factor,
          configEntries: Object.entries(t.configs || {}).map(([name, value]) => ({ name, value: String(value) })),
        })),
      })
      return { created }
    }
    case 'deleteTopics':
      await admin.deleteTopics({ topics: op.topics || [], timeout: timeoutOf(a) })
      return { ok: true }
    case 'fetchTopicMetadata': {
      const { topics } = await admin.fetchTopicMetadata({ topics: op.topics || [] })
      return {
        topics: topics.map(t => ({
          name: t.name,
          partitions: t.partitions
            .map(p => ({ partition: p.partitionId, leader: p.leader, replicas: p.replicas, isr: p.isr, error_code: p.partitionErrorCode }))
            .sort((x, y) => x.partition - y.partition),
        })),
      }
    }
    case 'fetchTopicOffsets': {
      const offsets = await admin.fetchTopicOffsets(op.topic)
      return {
        offsets: offsets
          .map(p => ({ partition: p.partition, low: Number(p.low), high: Number(p.high), offset: Number(p.offset) }))
          .sort((x, y) => x.partition - y.partition),
      }
    }
    case 'fetchTopicOffsetsByTimestamp': {
      const offsets = await admin.fetchTopicOffsetsByTimestamp(op.topic, op.timestamp)
      return {
        offsets: offsets.map(p => ({ partition: p.partition, offset: Number(p.offset) })).sort((x, y) => x.partition - y.partition),
      }
    }
    case 'describeCluster': {
      const c = await admin.describeCluster()
      return {
        cluster_id: c.clusterId,
        controller: c.controller,
        nodes: c.brokers.map(b => ({ id: b.nodeId, host: b.host, port: b.port })).sort((x, y) => x.id - y.id),
      }
    }
    default:
      throw usageError(`unknown admin op ${op.op}`)
  }
}

async function codecs(a) {
  // {"compress" | "decompress": {"<codec>": "<base64>"}}: run one codec over bytes made elsewhere
  // (a Java batch's records section, Python output), with exactly what KafkaJS would use.
  for (const mode of ['compress', 'decompress']) {
    if (!a[mode]) continue
    for (const [name, b64] of Object.entries(a[mode])) {
      const line = { type: mode === 'compress' ? 'compressed' : 'decompressed', codec: name }
      try {
        const codec = CompressionCodecs[compressionOf(name)]()
        const input = Buffer.from(b64, 'base64')
        const out = mode === 'compress' ? await codec.compress({ buffer: input }) : await codec.decompress(input)
        line[mode === 'compress' ? 'compressed_b64' : 'plain_b64'] = Buffer.from(out).toString('base64')
        line.ok = true
      } catch (e) {
        Object.assign(line, errorFields(e, { ok: false }))
      }
      emit(line)
    }
  }
  if (a.compress || a.decompress) return 0
  const plain = Buffer.from(
    Array.from({ length: 50 }, (_, i) => `record ${i} ` + 'x'.repeat(i)).join('\n'),
    'utf8'
  )
  for (const [name, type] of Object.entries(CODECS)) {
    const line = { type: 'codec', codec: name }
    try {
      if (type === CompressionTypes.None) {
        line.ok = true
      } else {
        const codec = CompressionCodecs[type]()
        const compressed = await codec.compress({ buffer: plain })
        const back = await codec.decompress(compressed)
        line.ok = Buffer.compare(Buffer.from(back), plain) === 0
        if (!line.ok) line.error = 'round trip mismatch'
        line.size_bytes = compressed.length
        if (a.emit_bytes) line.compressed_b64 = Buffer.from(compressed).toString('base64')
      }
      if (a.emit_bytes) line.plain_b64 = plain.toString('base64')
    } catch (e) {
      Object.assign(line, errorFields(e, { ok: false }))
    }
    emit(line)
  }
  return 0
}

const COMMANDS = {
  version, produce, txn, consume, admin: adminCommand, codecs,
  ...require('./schema_registry_ops.js').makeCommands({ emit, client, errorFields }),
}

// ------------------------------------------------------------------ main

function readArgs(argv) {
  if (argv.length < 1) return {}
  if (argv.length > 1) throw usageError(`expected one JSON argument, got ${argv.length}`)
  const raw = argv[0]
  let text
  if (raw === '-') text = fs.readFileSync(0, 'utf8')
  else if (raw.startsWith('@')) text = fs.readFileSync(raw.slice(1), 'utf8')
  else text = raw
  const parsed = JSON.parse(text.trim() === '' ? '{}' : text)
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw usageError('arguments must be a JSON object')
  }
  return parsed
}

async function main() {
  const [command, ...rest] = process.argv.slice(2)
  if (!command || ['-h', '--help', 'help'].includes(command)) {
    fs.writeSync(1, USAGE)
    return command ? 0 : 2
  }
  let args
  try {
    args = readArgs(rest)
  } catch (e) {
    emit(errorFields(e, { type: 'fatal', command, stage: 'arguments' }))
    return 2
  }
  const deadline = args.deadline_ms == null ? DEFAULT_DEADLINE_MS : Number(args.deadline_ms)
  setTimeout(() => {
    emit({ type: 'fatal', command, error: 'Watchdog', message: `the run took longer than deadline_ms=${deadline}; exiting` })
    process.exit(3)
  }, deadline).unref()
  const fn = COMMANDS[command]
  if (!fn) {
    emit({ type: 'fatal', command, error: 'UsageError', message: `unknown command ${command}; try --help` })
    return 2
  }
  try {
    return await fn(args)
  } catch (e) {
    emit(errorFields(e, { type: 'fatal', command }))
    if (e && e.stack) process.stderr.write(e.stack + '\n')
    return e && e.name === 'UsageError' ? 2 : 1
  }
}

main().then(
  rc => process.exit(rc),
  e => {
    emit(errorFields(e, { type: 'fatal' }))
    process.exit(1)
  }
)
