// echo.cc — the README's example: a ClientServer echo over tcp.
#include <zlink/zlink.hpp>
#include <iostream>

int main() {
    zlink::host server("S");
    server.add_cs_server("echo", "tcp://127.0.0.1:0");
    server.on_request(zlink::owner::channel("echo"), "Echo",
                      [](zlink::turn &t) { t.respond("EchoReply", t.text()); });
    server.start();
    zlink::host client("C");
    client.add_cs_client("echo", server.endpoint("echo")).start();
    auto task = client.request_to_channel("echo").payload("Echo", "hi").timeout(std::chrono::seconds(3)).async();
    std::cout << task.get().text() << "\n";   // "hi"; hosts shut down in their destructors
    return task.get().text() == "hi" ? 0 : 1;
}
