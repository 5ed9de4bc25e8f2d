import threading

import paho.mqtt.client as mqtt


def test_broker_fixture_delivers_a_message(broker):
    got = threading.Event()
    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    sub.on_message = lambda c, u, m: got.set() if m.payload == b"hi" else None
    sub.connect("127.0.0.1", broker.port)
    sub.subscribe("t", qos=1)
    sub.loop_start()
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    pub.connect("127.0.0.1", broker.port)
    pub.loop_start()
    pub.publish("t", b"hi", qos=1, retain=True)
    assert got.wait(5)
    for c in (sub, pub):
        c.loop_stop()
        c.disconnect()
