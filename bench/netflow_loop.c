// bench netflow's connection loop: rounds of N TCP connections over loopback, one after another
// in one thread (connect, accept, 64 bytes, the server closing first, the client reading to EOF
// and closing), each through both ends of the kernel's TCP. Reads each round's N from stdin and
// prints the nanoseconds a connection took, until end of input: one process for every round,
// so rounds can be short and many. C rather than Python: the interpreter's own time would hide
// a difference of 1 %.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int one_round(int server, struct sockaddr_in *address, int connections) {
    char request[64];
    char buffer[256];
    memset(request, 'x', sizeof request);
    for (int i = 0; i < connections; i++) {
        int client = socket(AF_INET, SOCK_STREAM, 0);
        if (client < 0 || connect(client, (struct sockaddr *)address, sizeof *address) != 0) {
            perror("connect");
            return 1;
        }
        int accepted = accept(server, NULL, NULL);
        if (accepted < 0 || send(client, request, sizeof request, 0) != sizeof request ||
            recv(accepted, buffer, sizeof buffer, 0) <= 0) {
            perror("request");
            return 1;
        }
        close(accepted);
        while (recv(client, buffer, sizeof buffer, 0) > 0) {
        }
        close(client);
    }
    return 0;
}

int main(void) {
    int server = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (server < 0 || bind(server, (struct sockaddr *)&address, length) != 0 ||
        getsockname(server, (struct sockaddr *)&address, &length) != 0 ||
        listen(server, 1024) != 0) {
        perror("listen");
        return 1;
    }
    int connections;
    while (scanf("%d", &connections) == 1 && connections > 0) {
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        if (one_round(server, &address, connections) != 0) {
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &end);
        double elapsed = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
        printf("%.1f\n", elapsed / connections);
        fflush(stdout);
    }
    return 0;
}
